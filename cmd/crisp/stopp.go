package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/lifecycle"
)

// stopPodOptions are the arguments of `crisp stopp`.
type stopPodOptions struct{ cmdutil.Verb }

func (o *stopPodOptions) Run(ctx context.Context) error {
	return o.WithRuntime(func(c *client.Client) error { return lifecycle.StopPods(ctx, c, o.Args, o.Out()) })
}

func newStopPodCommand(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "stopp POD...",
		Short:   "Stop one or more running pods",
		Long:    helpLong("stopp"),
		Example: helpExample("stopp"),
		Args:    cmdutil.ArgsRange(1, -1, "at least one POD"),
		RunE:    runOptions(f, &stopPodOptions{}),
	}
}
