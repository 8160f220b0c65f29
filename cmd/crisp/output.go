package main

import (
	"context"
	"fmt"
	"io"
	"regexp"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/output"
)

// printData writes v as JSON or YAML, or calls table for the table format
// (probe, smoke and bench print through it; they have no go-template).
func printData(out io.Writer, format string, v any, table func(w io.Writer) error) error {
	if output.Format(format) == output.GoTemplate {
		return usageErrorf("-o go-template is not available here; use -o json")
	}
	return output.Printer{Out: out, Format: output.Format(format)}.Print(v, table)
}

// row writes tab-separated cells as one table line.
func row(w io.Writer, cells ...any) { output.Row(w, cells...) }

// printer prints in the format -o and --template ask for.
func (f *factory) printer() output.Printer {
	return output.Printer{Out: f.Streams.Out, Format: output.Format(f.Global.Output), Template: f.Global.Template}
}

// printerOr is printer with def as the format when -o was not given (inspect
// and info print JSON unless asked otherwise, as crictl does).
func (f *factory) printerOr(cmd *cobra.Command, def output.Format) output.Printer {
	p := f.printer()
	if fl := cmd.Flags().Lookup("output"); fl == nil || !fl.Changed {
		p.Format = def
	}
	return p
}

// withClient dials the runtime, runs do and closes the connection.
func (f *factory) withClient(do func(c *client.Client) error) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	defer c.Close()
	return do(c)
}

// compileFilter compiles a regular-expression flag; empty means no filter.
func compileFilter(flagName, expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, usageErrorf("%s %q is not a regular expression: %v", flagName, expr, err)
	}
	return re, nil
}

// validateQuiet rejects -q together with -o json/yaml: IDs only and full
// data cannot both be printed.
func validateQuiet(quiet bool, format string) error {
	if quiet && format != "table" && format != "" {
		return usageErrorf("-q/--quiet prints IDs only; it cannot be combined with -o %s", format)
	}
	return nil
}

// parseLabels is --label k=v (repeatable) as a usage error when malformed.
func parseLabels(pairs []string) (map[string]string, error) {
	labels, err := client.ParseLabels(pairs)
	if err != nil {
		return nil, usageError{fmt.Errorf("--label: %w", err)}
	}
	return labels, nil
}

// atLeastArgs requires n or more positional arguments, named in the message.
func atLeastArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usageErrorf("%s needs %s", cmd.CommandPath(), names)
		}
		return nil
	}
}

// maxArgs allows at most n positional arguments.
func maxArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return usageErrorf("%s takes at most %s, got %d", cmd.CommandPath(), names, len(args))
		}
		return nil
	}
}

// noArgs rejects positional arguments with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("%s takes no arguments, got %q", cmd.CommandPath(), args)
	}
	return nil
}

// completeValidateRun is the RunE of a command that takes no arguments and
// whose options complete and validate themselves before they run.
func completeValidateRun(o interface {
	Complete() error
	Validate() error
	Run(context.Context) error
}) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		if err := o.Complete(); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return err
		}
		return o.Run(cmd.Context())
	}
}

// exactArgs requires n positional arguments, named in the message.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErrorf("%s needs %s, got %d argument(s)", cmd.CommandPath(), names, len(args))
		}
		return nil
	}
}
