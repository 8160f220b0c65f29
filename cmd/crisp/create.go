package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/lifecycle"
)

// createOptions are the flags of `crisp create`.
type createOptions struct{ lifecycle.PullFlags }

func (o *createOptions) Validate() error { return o.ValidatePull(lifecycle.PullNever) }

func (o *createOptions) Run(ctx context.Context) error {
	return o.WithRuntime(func(c *client.Client) error {
		return lifecycle.Create(ctx, c, o.Args[0], o.Args[1], o.Args[2], o.Pull, o.Out(), o.ErrOut())
	})
}

func newCreateCommand(f *cmdutil.Factory) *cobra.Command {
	o := &createOptions{}
	cmd := &cobra.Command{
		Use:     "create [flags] POD CONTAINER_CONFIG POD_CONFIG",
		Short:   "Create a container in a pod from config files",
		Long:    helpLong("create"),
		Example: helpExample("create"),
		Args:    cmdutil.ArgsRange(3, 3, "POD CONTAINER_CONFIG POD_CONFIG"),
		RunE:    runOptions(f, o),
	}
	o.Bind(cmd.Flags())
	return cmd
}
