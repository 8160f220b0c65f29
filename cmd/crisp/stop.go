package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/lifecycle"
)

// stopOptions are the flags of `crisp stop`.
type stopOptions struct {
	cmdutil.Verb
	Timeout int64
	All     bool
}

func (o *stopOptions) Validate() error { return o.RefsOrAll(o.All, "CONTAINER") }

func (o *stopOptions) Run(ctx context.Context) error {
	return o.WithRuntime(func(c *client.Client) error {
		return lifecycle.Stop(ctx, c, o.Args, o.All, o.Timeout, o.Out(), o.ErrOut())
	})
}

func newStopCommand(f *cmdutil.Factory) *cobra.Command {
	o := &stopOptions{}
	cmd := &cobra.Command{
		Use:     "stop [-t SECONDS] (CONTAINER... | -a)",
		Short:   "Stop one or more running containers",
		Long:    helpLong("stop"),
		Example: helpExample("stop"),
		RunE:    runOptions(f, o),
	}
	cmd.Flags().Int64VarP(&o.Timeout, "timeout", "t", 0, "seconds to wait after SIGTERM before SIGKILL")
	cmd.Flags().BoolVarP(&o.All, "all", "a", false, "stop every running container")
	return cmd
}
