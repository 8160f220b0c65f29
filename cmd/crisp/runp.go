package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/lifecycle"
)

// runPodOptions are the flags of `crisp runp`.
type runPodOptions struct {
	verb
	Runtime string
}

func (o *runPodOptions) Run(ctx context.Context) error {
	return o.withRuntime(func(c *client.Client) error {
		return lifecycle.RunPod(ctx, c, o.args[0], o.Runtime, o.out())
	})
}

func newRunPodCommand(f *factory) *cobra.Command {
	o := &runPodOptions{}
	cmd := &cobra.Command{
		Use:   "runp [flags] POD_CONFIG",
		Short: "Run a new pod from a config file (JSON or YAML)",
		Long: `Create and start a pod sandbox from a PodSandboxConfig file in JSON or YAML
(crictl's format: metadata.name and metadata.namespace are required, a
missing metadata.uid is made up) and print its ID.` + lifecycleExit,
		Example: `  crisp runp pod.json
  crisp runp --runtime runsc pod.yaml`,
		Args: argsRange(1, 1, "one POD_CONFIG file"),
		RunE: runOptions(f, o),
	}
	// crictl also has -r for --runtime; crisp's -r is --runtime-endpoint.
	cmd.Flags().StringVar(&o.Runtime, "runtime", "", "runtime handler to use (the runtime defines them)")
	cmd.Flags().DurationVarP(&o.CancelTimeout, "cancel-timeout", "T", 0, "cancel the request after this long (default --request-timeout)")
	return cmd
}
