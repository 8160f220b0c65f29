package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/lifecycle"
)

// rmpOptions are the flags of `crisp rmp`.
type rmpOptions struct {
	cmdutil.Verb
	Force, All bool
}

func (o *rmpOptions) Validate() error { return o.RefsOrAll(o.All, "POD") }

func (o *rmpOptions) Run(ctx context.Context) error {
	return o.WithRuntime(func(c *client.Client) error {
		return lifecycle.RemovePods(ctx, c, o.Args, o.All, o.Force, o.Out(), o.ErrOut())
	})
}

func newRmPodCommand(f *cmdutil.Factory) *cobra.Command {
	o := &rmpOptions{}
	cmd := &cobra.Command{
		Use:     "rmp [-f] (POD... | -a)",
		Short:   "Remove one or more pods",
		Long:    helpLong("rmp"),
		Example: helpExample("rmp"),
		RunE:    runOptions(f, o),
	}
	cmd.Flags().BoolVarP(&o.Force, "force", "f", false, "stop a ready pod before removing it")
	cmd.Flags().BoolVarP(&o.All, "all", "a", false, "remove every pod")
	return cmd
}
