package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/lifecycle"
)

// startOptions are the arguments of `crisp start`.
type startOptions struct{ verb }

func (o *startOptions) Run(ctx context.Context) error {
	return o.withRuntime(func(c *client.Client) error { return lifecycle.Start(ctx, c, o.args, o.out()) })
}

func newStartCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "start CONTAINER...",
		Short: "Start one or more created containers",
		Long: `Start created containers (each a full ID, a unique ID prefix or a unique
name), in order, printing each ID; the first failure stops.` + lifecycleExit,
		Example: `  crisp start 4f2a
  crisp start web sidecar`,
		Args: argsRange(1, -1, "at least one CONTAINER"),
		RunE: runOptions(f, &startOptions{}),
	}
}
