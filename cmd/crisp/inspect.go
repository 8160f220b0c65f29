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
	cmdutil.Verb
	now func() time.Time
	// run is query.Inspect, InspectPod or InspectImage.
	run func(ctx context.Context, c *client.Client, refs []string, quiet bool, now time.Time, p output.Printer) error
	// sel picks what to inspect when no reference is given.
	sel refSelector

	Refs  []string
	Quiet bool
	p     output.Printer
}

// inspectCommand builds one of the inspect commands around o: any number
// of references, or none and o's selectors.
func inspectCommand(f *cmdutil.Factory, o *inspectOptions, cmd *cobra.Command) *cobra.Command {
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = runOptions(f, o)
	cmd.Flags().BoolVarP(&o.Quiet, "quiet", "q", false, "leave out the runtime's verbose info")
	o.sel.bind(cmd.Flags())
	return cmd
}

func newInspectCommand(f *cmdutil.Factory) *cobra.Command {
	return inspectCommand(f, &inspectOptions{run: query.Inspect, sel: &containerSelectors{}}, &cobra.Command{
		Use:     "inspect CONTAINER...",
		Short:   "Show the full status of containers",
		Long:    helpLong("inspect"),
		Example: helpExample("inspect"),
	})
}

// Complete takes the references, the printer (JSON unless -o says
// otherwise, as crictl) and the clock.
func (o *inspectOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	if err := o.Verb.Complete(f, cmd, args); err != nil {
		return err
	}
	o.Refs, o.p = args, f.PrinterOr(cmd, output.JSON)
	if o.now == nil {
		o.now = time.Now
	}
	return nil
}

// Validate checks the selectors when they choose what to inspect (with
// references, crictl ignores them).
func (o *inspectOptions) Validate() error {
	if len(o.Refs) == 0 {
		return o.sel.check()
	}
	return nil
}

// Run fetches and prints every reference, or what the selectors match (no
// match prints nothing, as crictl).
func (o *inspectOptions) Run(ctx context.Context) error {
	return o.F.WithClient(func(c *client.Client) error {
		refs := o.Refs
		if len(refs) == 0 {
			var err error
			if refs, err = o.sel.list(ctx, c); err != nil || len(refs) == 0 {
				return err
			}
		}
		return o.run(ctx, c, refs, o.Quiet, o.now(), o.p)
	})
}
