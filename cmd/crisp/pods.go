package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

// podsOptions are the flags of `crisp pods`.
type podsOptions struct {
	f *cmdutil.Factory
	// now is the clock CREATED is measured against (tests pin it).
	now func() time.Time

	ID                      string
	Select                  cmdutil.PodSelectors
	Quiet, NoTrunc, Verbose bool

	filter client.PodFilter
}

func newPodsCommand(f *cmdutil.Factory) *cobra.Command {
	return podsCommand(&podsOptions{f: f, now: time.Now})
}

// podsCommand binds the command's flags to o; tests parse into their own o.
func podsCommand(o *podsOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "pods [flags]",
		Short:   "List pod sandboxes",
		Long:    helpLong("pods"),
		Example: helpExample("pods"),
		Args:    cmdutil.NoArgs,
		RunE:    runOptions(o.f, o),
	}
	fl := cmd.Flags()
	fl.StringVar(&o.ID, "id", "", "only the pod with this ID or ID prefix")
	o.Select.Bind(fl, "only")
	fl.BoolVarP(&o.Quiet, "quiet", "q", false, "print pod IDs only")
	fl.BoolVarP(&o.Verbose, "verbose", "v", false, "a block of key: value lines a pod instead of the table (crictl's -v)")
	fl.BoolVar(&o.NoTrunc, "no-trunc", false, "do not truncate IDs")
	_ = cmd.RegisterFlagCompletionFunc("state", cobra.FixedCompletions(client.PodStates, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete has nothing to add: the flags are all there is.
func (o *podsOptions) Complete(*cmdutil.Factory, *cobra.Command, []string) error { return nil }

// Validate builds the filter from the flags (usage errors for bad ones)
// before the runtime is dialled.
func (o *podsOptions) Validate() (err error) {
	if err := cmdutil.ValidateQuiet(o.Quiet, o.f.Global.Output); err != nil {
		return err
	}
	o.filter, err = o.Select.Filter()
	o.filter.ID = o.ID
	return err
}

// Run lists the pods and prints them.
func (o *podsOptions) Run(ctx context.Context) error {
	return o.f.WithClient(func(c *client.Client) error {
		return query.Pods(ctx, c, o.filter, query.ListOptions{Quiet: o.Quiet, NoTrunc: o.NoTrunc, Now: o.now(), Verbose: o.Verbose}, o.f.Printer())
	})
}
