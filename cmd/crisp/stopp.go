package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/helptext"
	"github.com/crisp-cri/crisp/internal/lifecycle"
)

// stopPodOptions are the arguments of `crisp stopp`.
type stopPodOptions struct{ verb }

func (o *stopPodOptions) Run(ctx context.Context) error {
	return o.WithRuntime(func(c *client.Client) error { return lifecycle.StopPods(ctx, c, o.Args, o.Out()) })
}

func newStopPodCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:     "stopp POD...",
		Short:   "Stop one or more running pods",
		Long:    helptext.Long("stopp"),
		Example: helptext.Example("stopp"),
		Args:    argsRange(1, -1, "at least one POD"),
		RunE:    runOptions(f, &stopPodOptions{}),
	}
}
