package main

import (
	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/lifecycle"
)

// rmpOptions are the flags of `crisp rmp`.
type rmpOptions struct {
	Force, All bool
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
		Args: func(cmd *cobra.Command, args []string) error {
			if o.All == (len(args) > 0) {
				return usageErrorf("%s takes POD... or -a, not both nor neither", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return withRuntime(f, 0, func(c *client.Client) error {
				return lifecycle.RemovePods(cmd.Context(), c, args, o.All, o.Force, f.Streams.Out, f.Streams.ErrOut)
			})
		},
	}
	cmd.Flags().BoolVarP(&o.Force, "force", "f", false, "stop a ready pod before removing it")
	cmd.Flags().BoolVarP(&o.All, "all", "a", false, "remove every pod")
	return cmd
}
