package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/lifecycle"
)

// rmpOptions are the flags of `crisp rmp`.
type rmpOptions struct {
	verb
	Force, All bool
}

func (o *rmpOptions) Validate() error { return o.refsOrAll(o.All, "POD") }

func (o *rmpOptions) Run(ctx context.Context) error {
	return o.withRuntime(func(c *client.Client) error {
		return lifecycle.RemovePods(ctx, c, o.args, o.All, o.Force, o.out(), o.errOut())
	})
}

func newRmPodCommand(f *factory) *cobra.Command {
	o := &rmpOptions{}
	cmd := &cobra.Command{
		Use:   "rmp [-f] (POD... | -a)",
		Short: "Remove one or more pods",
		Long: `Remove pod sandboxes and their containers (each a full ID, a unique ID prefix
or a unique name; -a: every one). A ready pod is refused unless -f, which
stops it first. Every pod is tried.` + lifecycleExit,
		Example: `  crisp rmp web
  crisp rmp -f 9c1e
  crisp rmp -a -f`,
		RunE: runOptions(f, o),
	}
	cmd.Flags().BoolVarP(&o.Force, "force", "f", false, "stop a ready pod before removing it")
	cmd.Flags().BoolVarP(&o.All, "all", "a", false, "remove every pod")
	return cmd
}
