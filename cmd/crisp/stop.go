package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/lifecycle"
)

// stopOptions are the flags of `crisp stop`.
type stopOptions struct {
	verb
	Timeout int64
	All     bool
}

func (o *stopOptions) Validate() error { return o.refsOrAll(o.All, "CONTAINER") }

func (o *stopOptions) Run(ctx context.Context) error {
	return o.withRuntime(func(c *client.Client) error {
		return lifecycle.Stop(ctx, c, o.args, o.All, o.Timeout, o.out(), o.errOut())
	})
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
		RunE: runOptions(f, o),
	}
	cmd.Flags().Int64VarP(&o.Timeout, "timeout", "t", 0, "seconds to wait after SIGTERM before SIGKILL")
	cmd.Flags().BoolVarP(&o.All, "all", "a", false, "stop every running container")
	return cmd
}
