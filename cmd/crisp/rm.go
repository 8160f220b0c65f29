package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/lifecycle"
)

// rmOptions are the flags of `crisp rm`.
type rmOptions struct {
	verb
	Force, All, KeepLogs bool
}

func (o *rmOptions) Validate() error { return o.refsOrAll(o.All, "CONTAINER") }

func (o *rmOptions) Run(ctx context.Context) error {
	return o.withRuntime(func(c *client.Client) error {
		return lifecycle.Remove(ctx, c, o.args, o.All, o.Force, o.KeepLogs, o.out(), o.errOut())
	})
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
		RunE: runOptions(f, o),
	}
	cmd.Flags().BoolVarP(&o.Force, "force", "f", false, "stop a running container before removing it")
	cmd.Flags().BoolVarP(&o.All, "all", "a", false, "remove every container")
	cmd.Flags().BoolVarP(&o.KeepLogs, "keep-logs", "k", false, "keep the log file and its rotations")
	return cmd
}
