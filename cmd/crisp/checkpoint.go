package main

import (
	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/lifecycle"
)

func newCheckpointCommand(f *factory) *cobra.Command {
	var export string
	cmd := &cobra.Command{
		Use:   "checkpoint --export FILE.tar CONTAINER...",
		Short: "Checkpoint one or more running containers",
		Long: `Checkpoint running containers (each a full ID, a unique ID prefix or a
unique name) into the tar archive --export names, on the runtime's host.` + lifecycleExit,
		Example: `  crisp checkpoint --export /tmp/web.tar web`,
		Args: func(cmd *cobra.Command, args []string) error {
			if export == "" {
				return usageErrorf("%s needs --export=/path/to/checkpoint.tar", cmd.CommandPath())
			}
			return argsRange(1, -1, "at least one CONTAINER")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return withRuntime(f, 0, func(c *client.Client) error {
				return lifecycle.Checkpoint(cmd.Context(), c, args, export, f.Streams.Out)
			})
		},
	}
	cmd.Flags().StringVarP(&export, "export", "e", "", "the tar archive to write the checkpoint to")
	return cmd
}
