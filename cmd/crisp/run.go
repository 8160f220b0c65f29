package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/lifecycle"
)

// runContainerOptions are the flags of `crisp run`.
type runContainerOptions struct {
	lifecycle.PullFlags
	Runtime string
}

func (o *runContainerOptions) Validate() error { return o.ValidatePull(lifecycle.PullIfMissing) }

func (o *runContainerOptions) Run(ctx context.Context) error {
	return o.WithRuntime(func(c *client.Client) error {
		return lifecycle.Run(ctx, c, o.Args[0], o.Args[1], o.Runtime, o.Pull, o.Out(), o.ErrOut())
	})
}

func newRunCommand(f *cmdutil.Factory) *cobra.Command {
	o := &runContainerOptions{}
	cmd := &cobra.Command{
		Use:     "run [flags] CONTAINER_CONFIG POD_CONFIG",
		Short:   "Run a new container in a new pod, from config files",
		Long:    helpLong("run"),
		Example: helpExample("run"),
		Args:    cmdutil.ArgsRange(2, 2, "CONTAINER_CONFIG POD_CONFIG"),
		RunE:    runOptions(f, o),
	}
	o.Bind(cmd.Flags())
	cmd.Flags().StringVarP(&o.Runtime, "runtime", "r", "", "runtime handler for the pod (the runtime defines them)")
	return cmd
}
