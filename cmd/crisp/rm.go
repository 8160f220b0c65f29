package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/lifecycle"
)

// rmOptions are the flags of `crisp rm`.
type rmOptions struct {
	cmdutil.Verb
	Force, All, KeepLogs bool
}

func (o *rmOptions) Validate() error { return o.RefsOrAll(o.All, "CONTAINER") }

func (o *rmOptions) Run(ctx context.Context) error {
	return o.WithRuntime(func(c *client.Client) error {
		return lifecycle.Remove(ctx, c, o.Args, o.All, o.Force, o.KeepLogs, o.Out(), o.ErrOut())
	})
}

func newRmCommand(f *cmdutil.Factory) *cobra.Command {
	o := &rmOptions{}
	cmd := &cobra.Command{
		Use:     "rm [-f] [-k] (CONTAINER... | -a)",
		Short:   "Remove one or more containers",
		Long:    helpLong("rm"),
		Example: helpExample("rm"),
		RunE:    runOptions(f, o),
	}
	cmd.Flags().BoolVarP(&o.Force, "force", "f", false, "stop a running container before removing it")
	cmd.Flags().BoolVarP(&o.All, "all", "a", false, "remove every container")
	cmd.Flags().BoolVarP(&o.KeepLogs, "keep-logs", "k", false, "keep the log file and its rotations")
	return cmd
}
