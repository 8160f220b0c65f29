package main

import (
	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/lifecycle"
)

// rmOptions are the flags of `crisp rm`.
type rmOptions struct {
	Force, All, KeepLogs bool
}

func newRmCommand(f *factory) *cobra.Command {
	o := &rmOptions{}
	cmd := &cobra.Command{
		Use:   "rm [-f] [-k] (CONTAINER... | -a)",
		Short: "Remove one or more containers",
		Long: `Remove containers (each a full ID, a unique ID prefix or a unique name; -a:
every one). A running container is refused unless -f, which stops it first.
As crictl does, the container's log file and its rotations are deleted too
unless -k. Every container is tried; each removed ID is printed.` + lifecycleExit,
		Example: `  crisp rm 4f2a
  crisp rm -f web
  crisp rm -a -f`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.All == (len(args) > 0) {
				return usageErrorf("%s takes CONTAINER... or -a, not both nor neither", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return withRuntime(f, 0, func(c *client.Client) error {
				return lifecycle.Remove(cmd.Context(), c, args, o.All, o.Force, o.KeepLogs, f.Streams.Out, f.Streams.ErrOut)
			})
		},
	}
	cmd.Flags().BoolVarP(&o.Force, "force", "f", false, "stop a running container before removing it")
	cmd.Flags().BoolVarP(&o.All, "all", "a", false, "remove every container")
	cmd.Flags().BoolVarP(&o.KeepLogs, "keep-logs", "k", false, "keep the log file and its rotations")
	return cmd
}
