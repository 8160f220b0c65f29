package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

// psOptions are the flags of `crisp ps`.
type psOptions struct {
	cmdutil.Verb
	now func() time.Time

	listFlags
	Select           cmdutil.ContainerSelectors
	ResolveImagePath bool

	filter client.ContainerFilter
}

func newPsCommand(f *cmdutil.Factory) *cobra.Command {
	return psCommand(f, &psOptions{now: time.Now})
}

// psCommand binds the command's flags to o; tests parse into their own o.
func psCommand(f *cmdutil.Factory, o *psOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "ps [flags]",
		Short:   "List containers",
		Long:    helpLong("ps"),
		Example: helpExample("ps"),
		Args:    cmdutil.NoArgs,
		RunE:    runOptions(f, o),
	}
	fl := cmd.Flags()
	o.bind(fl, "container")
	o.Select.Bind(fl, "only", true)
	fl.BoolVarP(&o.ResolveImagePath, "resolve-image-path", "r", false, "crictl's: show the image's name, not its ID (crisp's table always does)")
	_ = cmd.RegisterFlagCompletionFunc("pod", completePods(f))
	_ = cmd.RegisterFlagCompletionFunc("state", cobra.FixedCompletions(client.ContainerStates, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete keeps the factory: the flags are all there is.
func (o *psOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	return o.Verb.Complete(f, cmd, args)
}

// Validate builds the filter from the flags (usage errors for bad ones)
// before the runtime is dialled.
func (o *psOptions) Validate() (err error) {
	if err := o.validate(o.F); err != nil {
		return err
	}
	o.filter, err = o.Select.Filter()
	o.filter.ID = o.ID
	return err
}

// Run lists the containers and prints them.
func (o *psOptions) Run(ctx context.Context) error {
	return o.F.WithClient(func(c *client.Client) error {
		return query.PS(ctx, c, o.filter, o.options(o.now()), o.F.Printer())
	})
}
