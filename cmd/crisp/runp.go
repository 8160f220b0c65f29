package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/lifecycle"
)

// runPodOptions are the flags of `crisp runp`.
type runPodOptions struct {
	cmdutil.Verb
	Runtime string
}

func (o *runPodOptions) Run(ctx context.Context) error {
	return o.WithRuntime(func(c *client.Client) error {
		return lifecycle.RunPod(ctx, c, o.Args[0], o.Runtime, o.Out(), o.ErrOut())
	})
}

func newRunPodCommand(f *cmdutil.Factory) *cobra.Command {
	o := &runPodOptions{}
	cmd := &cobra.Command{
		Use:     "runp [flags] POD_CONFIG",
		Short:   "Run a new pod from a config file (JSON or YAML)",
		Long:    helpLong("runp"),
		Example: helpExample("runp"),
		Args:    cmdutil.ArgsRange(1, 1, "one POD_CONFIG file"),
		RunE:    runOptions(f, o),
	}
	// crictl also has -r for --runtime; crisp's -r is --runtime-endpoint.
	cmd.Flags().StringVarP(&o.Runtime, "runtime", "r", "", "runtime handler to use (the runtime defines them)")
	cmd.Flags().DurationVarP(&o.CancelTimeout, "cancel-timeout", "T", 0, "cancel the request after this long (default --request-timeout)")
	return cmd
}
