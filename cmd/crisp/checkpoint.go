package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/lifecycle"
)

// checkpointOptions are the flags of `crisp checkpoint`.
type checkpointOptions struct {
	verb
	Export string
}

func (o *checkpointOptions) Validate() error {
	if o.Export == "" {
		return usageErrorf("%s needs --export=/path/to/checkpoint.tar", o.path)
	}
	return nil
}

func (o *checkpointOptions) Run(ctx context.Context) error {
	return o.withRuntime(func(c *client.Client) error {
		return lifecycle.Checkpoint(ctx, c, o.args, o.Export, o.out())
	})
}

func newCheckpointCommand(f *factory) *cobra.Command {
	o := &checkpointOptions{}
	cmd := &cobra.Command{
		Use:   "checkpoint --export FILE.tar CONTAINER...",
		Short: "Checkpoint one or more running containers",
		Long: `Checkpoint running containers (each a full ID, a unique ID prefix or a
unique name) into the tar archive --export names, on the runtime's host.` + lifecycleExit,
		Example: `  crisp checkpoint --export /tmp/web.tar web`,
		Args:    argsRange(1, -1, "at least one CONTAINER"),
		RunE:    runOptions(f, o),
	}
	cmd.Flags().StringVarP(&o.Export, "export", "e", "", "the tar archive to write the checkpoint to")
	return cmd
}
