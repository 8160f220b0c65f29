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
	cmdutil.Verb
	// now is the clock CREATED is measured against (tests pin it).
	now func() time.Time

	listFlags
	Select cmdutil.PodSelectors

	filter client.PodFilter
}

func newPodsCommand(f *cmdutil.Factory) *cobra.Command {
	return podsCommand(f, &podsOptions{now: time.Now})
}

// podsCommand binds the command's flags to o; tests parse into their own o.
func podsCommand(f *cmdutil.Factory, o *podsOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "pods [flags]",
		Short:   "List pod sandboxes",
		Long:    helpLong("pods"),
		Example: helpExample("pods"),
		Args:    cmdutil.NoArgs,
		RunE:    runOptions(f, o),
	}
	fl := cmd.Flags()
	o.bind(fl, "pod")
	o.Select.Bind(fl, "only")
	_ = cmd.RegisterFlagCompletionFunc("state", cobra.FixedCompletions(client.PodStates, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete keeps the factory: the flags are all there is.
func (o *podsOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	return o.Verb.Complete(f, cmd, args)
}

// Validate builds the filter from the flags (usage errors for bad ones)
// before the runtime is dialled.
func (o *podsOptions) Validate() (err error) {
	if err := o.validate(o.F); err != nil {
		return err
	}
	o.filter, err = o.Select.Filter()
	o.filter.ID = o.ID
	return err
}

// Run lists the pods and prints them.
func (o *podsOptions) Run(ctx context.Context) error {
	return o.F.WithClient(func(c *client.Client) error {
		return query.Pods(ctx, c, o.filter, o.options(o.now()), o.F.Printer())
	})
}
