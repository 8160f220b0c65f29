package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

// infoOptions are `crisp info`'s flags.
type infoOptions struct {
	cmdutil.Verb
	Quiet bool

	p output.Printer
}

// Complete takes the printer: JSON unless -o says otherwise, as crictl.
func (o *infoOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	o.p = f.PrinterOr(cmd, output.JSON)
	return o.Verb.Complete(f, cmd, args)
}

// Run prints the runtime's status.
func (o *infoOptions) Run(ctx context.Context) error {
	return o.WithRuntime(func(c *client.Client) error { return query.Info(ctx, c, o.Quiet, o.p) })
}

func newInfoCommand(f *cmdutil.Factory) *cobra.Command {
	o := &infoOptions{}
	cmd := &cobra.Command{
		Use:     "info",
		Short:   "Show the runtime's status, conditions and configuration",
		Long:    helpLong("info"),
		Example: helpExample("info"),
		Args:    cmdutil.NoArgs,
		RunE:    runOptions(f, o),
	}
	cmd.Flags().BoolVarP(&o.Quiet, "quiet", "q", false, "leave out the runtime's verbose info")
	return cmd
}
