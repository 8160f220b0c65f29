package main

import (
	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/lifecycle"
)

// stopOptions are the flags of `crisp stop`.
type stopOptions struct {
	Timeout int64
	All     bool
}

func newStopCommand(f *factory) *cobra.Command {
	o := &stopOptions{}
	cmd := &cobra.Command{
		Use:   "stop [-t SECONDS] (CONTAINER... | -a)",
		Short: "Stop one or more running containers",
		Long: `Stop containers (each a full ID, a unique ID prefix or a unique name; -a:
every running one): SIGTERM, then SIGKILL after -t seconds (0: at once).
Each ID is printed once stopped; the first failure stops.` + lifecycleExit,
		Example: `  crisp stop web
  crisp stop -t 30 4f2a 9c1e
  crisp stop -a`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.All == (len(args) > 0) {
				return usageErrorf("%s takes CONTAINER... or -a, not both nor neither", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return withRuntime(f, 0, func(c *client.Client) error {
				return lifecycle.Stop(cmd.Context(), c, args, o.All, o.Timeout, f.Streams.Out, f.Streams.ErrOut)
			})
		},
	}
	cmd.Flags().Int64VarP(&o.Timeout, "timeout", "t", 0, "seconds to wait after SIGTERM before SIGKILL")
	cmd.Flags().BoolVarP(&o.All, "all", "a", false, "stop every running container")
	return cmd
}
