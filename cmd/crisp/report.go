package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/report"
)

type reportOptions struct {
	cmdutil.Verb
	Files []string
	JUnit string
}

func newReportCommand(f *cmdutil.Factory) *cobra.Command {
	o := &reportOptions{}
	cmd := &cobra.Command{
		Use:     "report [--junit FILE] [-o table|markdown|json|yaml] (FILE... | -)",
		Short:   "Merge the smoke and probe JSON reports of many nodes",
		Long:    helpLong("report"),
		Example: helpExample("report"),
		// -o also takes markdown (root's check reads the annotation).
		Annotations: map[string]string{cmdutil.OutputFormatsAnnotation: strings.Join(report.Formats, ",")},
		RunE:        runOptions(f, o),
	}
	cmd.Flags().StringVar(&o.JUnit, "junit", "", "write the merged results as JUnit XML to FILE")
	return cmd
}

// Complete takes the files from the arguments.
func (o *reportOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	if err := o.Verb.Complete(f, cmd, args); err != nil {
		return err
	}
	o.Files = args
	return nil
}

// Validate wants at least one input.
func (o *reportOptions) Validate() error {
	if len(o.Files) == 0 {
		return cmdutil.UsageErrorf("report needs FILEs, or - to read stdin")
	}
	return cmdutil.CheckOutputFile("--junit", o.JUnit)
}

// Run merges the reports, writes them, and fails when a node did.
func (o *reportOptions) Run(ctx context.Context) error {
	fleet, err := report.Load(ctx, o.Files, o.F.Streams.In)
	if err != nil {
		return err
	}
	if o.JUnit != "" {
		if err := fleet.WriteJUnitFile(o.JUnit); err != nil {
			return fmt.Errorf("--junit: %w", err)
		}
	}
	if err := fleet.Write(o.F.Streams.Out, o.F.Global.Output); err != nil {
		return err
	}
	if err := fleet.Check(); err != nil {
		_, _ = fmt.Fprintln(o.F.Streams.ErrOut, "crisp report:", err) // the error stream is the last resort: a failed write there has nowhere to go
		return cmdutil.ErrReported
	}
	return nil
}
