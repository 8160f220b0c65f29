package main

import (
	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/lifecycle"
)

func newStartCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "start CONTAINER...",
		Short: "Start one or more created containers",
		Long: `Start created containers (each a full ID, a unique ID prefix or a unique
name), in order, printing each ID; the first failure stops.` + lifecycleExit,
		Example: `  crisp start 4f2a
  crisp start web sidecar`,
		Args: argsRange(1, -1, "at least one CONTAINER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withRuntime(f, 0, func(c *client.Client) error {
				return lifecycle.Start(cmd.Context(), c, args, f.Streams.Out)
			})
		},
	}
}
