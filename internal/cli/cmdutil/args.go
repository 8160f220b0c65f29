package cmdutil

import (
	"fmt"
	"io"
	"regexp"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/client"
)

// ExactArgs requires n positional arguments, named in the message.
func ExactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return UsageErrorf("%s needs %s, got %d argument(s)", cmd.CommandPath(), names, len(args))
		}
		return nil
	}
}

// AtLeastArgs requires n or more positional arguments, named in the message.
func AtLeastArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return UsageErrorf("%s needs %s, got %d argument(s)", cmd.CommandPath(), names, len(args))
		}
		return nil
	}
}

// MaxArgs allows at most n positional arguments.
func MaxArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return UsageErrorf("%s takes at most %s, got %d", cmd.CommandPath(), names, len(args))
		}
		return nil
	}
}

// NoArgs rejects positional arguments with a usage error.
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return UsageErrorf("%s takes no arguments, got %q", cmd.CommandPath(), args)
	}
	return nil
}

// CompileFilter compiles a regular-expression flag; empty means no filter.
func CompileFilter(flagName, expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, UsageErrorf("%s %q is not a regular expression: %v", flagName, expr, err)
	}
	return re, nil
}

// ValidateQuiet rejects -q together with -o json/yaml: IDs only and full
// data cannot both be printed.
func ValidateQuiet(quiet bool, format string) error {
	if quiet && format != "table" && format != "" {
		return UsageErrorf("-q/--quiet prints IDs only; it cannot be combined with -o %s", format)
	}
	return nil
}

// ParseLabels is --label k=v (repeatable) as a usage error when malformed.
func ParseLabels(pairs []string) (map[string]string, error) {
	labels, err := client.ParseLabels(pairs)
	if err != nil {
		return nil, UsageError{fmt.Errorf("--label: %w", err)}
	}
	return labels, nil
}

// PrintDataFormats are the -o formats PrintData prints, as the
// OutputFormatsAnnotation of the commands that print through it: root's
// check then refuses -o go-template before anything runs.
const PrintDataFormats = "table,json,yaml"

// PrintData writes v as JSON or YAML, or calls table for the table format
// (probe, smoke, bench and report print through it; they have no
// go-template).
func PrintData(out io.Writer, format string, v any, table func(w io.Writer) error) error {
	if output.Format(format) == output.GoTemplate {
		return UsageErrorf("-o go-template is not available here; use -o json")
	}
	return output.Printer{Out: out, Format: output.Format(format)}.Print(v, table)
}
