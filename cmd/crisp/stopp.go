package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/lifecycle"
)

// stopPodOptions are the arguments of `crisp stopp`.
type stopPodOptions struct{ verb }

func (o *stopPodOptions) Run(ctx context.Context) error {
	return o.withRuntime(func(c *client.Client) error { return lifecycle.StopPods(ctx, c, o.args, o.out()) })
}

func newStopPodCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "stopp POD...",
		Short: "Stop one or more running pods",
		Long: `Stop pod sandboxes (each a full ID, a unique ID prefix or a unique name) and
their containers, in order; the first failure stops.` + lifecycleExit,
		Example: `  crisp stopp web
  crisp stopp 9c1e 77ab`,
		Args: argsRange(1, -1, "at least one POD"),
		RunE: runOptions(f, &stopPodOptions{}),
	}
}
