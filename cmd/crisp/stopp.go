package main

import (
	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/lifecycle"
)

func newStopPodCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "stopp POD...",
		Short: "Stop one or more running pods",
		Long: `Stop pod sandboxes (each a full ID, a unique ID prefix or a unique name) and
their containers, in order; the first failure stops.` + lifecycleExit,
		Example: `  crisp stopp web
  crisp stopp 9c1e 77ab`,
		Args: argsRange(1, -1, "at least one POD"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withRuntime(f, 0, func(c *client.Client) error {
				return lifecycle.StopPods(cmd.Context(), c, args, f.Streams.Out)
			})
		},
	}
}
