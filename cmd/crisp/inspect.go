package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

// inspectOptions are the flags of inspect, inspectp and inspecti, which
// differ only in what they look up.
type inspectOptions struct {
	f   *cmdutil.Factory
	now func() time.Time
	// run is query.Inspect, InspectPod or InspectImage.
	run func(ctx context.Context, c *client.Client, refs []string, quiet bool, now time.Time, p output.Printer) error

	Refs  []string
	Quiet bool
	p     output.Printer
}

// inspectCommand builds one of the inspect commands around o.
func inspectCommand(f *cmdutil.Factory, o *inspectOptions, cmd *cobra.Command) *cobra.Command {
	cmd.RunE = runOptions(f, o)
	cmd.Flags().BoolVarP(&o.Quiet, "quiet", "q", false, "leave out the runtime's verbose info")
	return cmd
}

func newInspectCommand(f *cmdutil.Factory) *cobra.Command {
	return withContainerSelectors(f, inspectCommand(f, &inspectOptions{run: query.Inspect}, &cobra.Command{
		Use:     "inspect CONTAINER...",
		Short:   "Show the full status of containers",
		Long:    helpLong("inspect"),
		Example: helpExample("inspect"),
		Args:    cmdutil.AtLeastArgs(1, "at least one CONTAINER (ID, ID prefix or name)"),
	}))
}

// Complete takes the references, the printer (JSON unless -o says
// otherwise, as crictl) and the clock.
func (o *inspectOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	o.f, o.Refs, o.p = f, args, f.PrinterOr(cmd, output.JSON)
	if o.now == nil {
		o.now = time.Now
	}
	return nil
}

// Validate accepts: the positional checks are cobra's Args.
func (o *inspectOptions) Validate() error { return nil }

// Run fetches and prints every reference.
func (o *inspectOptions) Run(ctx context.Context) error {
	return o.f.WithClient(func(c *client.Client) error { return o.run(ctx, c, o.Refs, o.Quiet, o.now(), o.p) })
}
