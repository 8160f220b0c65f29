package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/lifecycle"
)

// startOptions are the arguments of `crisp start`.
type startOptions struct{ cmdutil.Verb }

func (o *startOptions) Run(ctx context.Context) error {
	return o.WithRuntime(func(c *client.Client) error { return lifecycle.Start(ctx, c, o.Args, o.Out()) })
}

func newStartCommand(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "start CONTAINER...",
		Short:   "Start one or more created containers",
		Long:    helpLong("start"),
		Example: helpExample("start"),
		Args:    cmdutil.ArgsRange(1, -1, "at least one CONTAINER"),
		RunE:    runOptions(f, &startOptions{}),
	}
}
