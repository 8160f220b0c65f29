package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/report"
)

type reportOptions struct {
	f     *factory
	Files []string
	JUnit string
}

func newReportCommand(f *factory) *cobra.Command {
	o := &reportOptions{f: f}
	cmd := &cobra.Command{
		Use:   "report [--junit FILE] [-o table|markdown|json|yaml] (FILE... | -)",
		Short: "Merge the smoke and probe JSON reports of many nodes",
		Long: `Merge the JSON reports of crisp smoke and crisp probe (-o json) from many
nodes: a table of nodes, the matrix of checks by nodes (nodes with identical
results share a column), then every failure with its detail. The input may be
files or - for stdin, each holding one or many reports, with other lines
around them: the output of kubectl logs -l app=crisp-smoke reads as is
(--prefix and --timestamps too). A later report of the same node and kind
replaces an earlier one.

--junit writes one JUnit test suite per node; its failure count is the number
of failed checks plus unreadable reports. -o markdown suits CI job summaries.

EXIT STATUS
  0  every node passed
  1  a node failed, a report was cut short or unreadable, or the input held no report
  2  bad flags or arguments`,
		Example: `  kubectl logs -l app=crisp-smoke --tail=-1 | crisp report -
  crisp report node-*.json --junit fleet.xml
  crisp report -o markdown smoke.log >> "$GITHUB_STEP_SUMMARY"`,
		// report reads files, not a runtime: -o also takes markdown.
		PersistentPreRunE: func(*cobra.Command, []string) error {
			switch f.Global.Output {
			case "table", "markdown", "json", "yaml":
				return nil
			}
			return usageErrorf("-o/--output must be table, markdown, json or yaml, not %q", f.Global.Output)
		},
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("report needs FILEs, or - to read stdin")
			}
			o.Files = args
			return o.Run()
		},
	}
	cmd.Flags().StringVar(&o.JUnit, "junit", "", "write the merged results as JUnit XML to FILE")
	return cmd
}

func (o *reportOptions) Run() error {
	fleet, err := report.Load(o.Files, o.f.Streams.In)
	if err != nil {
		return err
	}
	if o.JUnit != "" {
		if err := writeFile(o.JUnit, fleet.WriteJUnit); err != nil {
			return fmt.Errorf("--junit: %w", err)
		}
	}
	out := o.f.Streams.Out
	switch o.f.Global.Output {
	case "markdown":
		err = fleet.WriteMarkdown(out)
	case "table":
		err = fleet.WriteText(out)
	default:
		err = printData(out, o.f.Global.Output, fleet, nil)
	}
	if err != nil {
		return err
	}
	if err := fleet.Check(); err != nil {
		fmt.Fprintln(o.f.Streams.ErrOut, "crisp report:", err)
		return errReported
	}
	return nil
}

func writeFile(path string, write func(w io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		_ = f.Close() // the write error says more
		return err
	}
	return f.Close()
}
