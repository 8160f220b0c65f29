package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/lifecycle"
)

// checkpointOptions are the flags of `crisp checkpoint`.
type checkpointOptions struct {
	cmdutil.Verb
	Export string
}

func (o *checkpointOptions) Validate() error {
	if o.Export == "" {
		return cmdutil.UsageErrorf("%s needs --export=/path/to/checkpoint.tar", o.Path)
	}
	return nil
}

func (o *checkpointOptions) Run(ctx context.Context) error {
	return o.WithRuntime(func(c *client.Client) error {
		return lifecycle.Checkpoint(ctx, c, o.Args, o.Export, o.Out())
	})
}

func newCheckpointCommand(f *cmdutil.Factory) *cobra.Command {
	o := &checkpointOptions{}
	cmd := &cobra.Command{
		Use:     "checkpoint --export FILE.tar CONTAINER...",
		Short:   "Checkpoint one or more running containers",
		Long:    helpLong("checkpoint"),
		Example: helpExample("checkpoint"),
		Args:    cmdutil.ArgsRange(1, -1, "at least one CONTAINER"),
		RunE:    runOptions(f, o),
	}
	cmd.Flags().StringVarP(&o.Export, "export", "e", "", "the tar archive to write the checkpoint to")
	return cmd
}
