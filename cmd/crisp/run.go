package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/lifecycle"
)

// runContainerOptions are the flags of `crisp run`.
type runContainerOptions struct {
	pullFlags
	Runtime string
}

func (o *runContainerOptions) Validate() error { return o.validate(lifecycle.PullIfMissing) }

func (o *runContainerOptions) Run(ctx context.Context) error {
	return o.withRuntime(func(c *client.Client) error {
		return lifecycle.Run(ctx, c, o.args[0], o.args[1], o.Runtime, o.Pull, o.out(), o.errOut())
	})
}

func newRunCommand(f *factory) *cobra.Command {
	o := &runContainerOptions{}
	cmd := &cobra.Command{
		Use:   "run [flags] CONTAINER_CONFIG POD_CONFIG",
		Short: "Run a new container in a new pod, from config files",
		Long: `Run a pod from POD_CONFIG and, in it, a container from CONTAINER_CONFIG
(JSON or YAML files), started, and print the container's ID. The image is
pulled when the runtime lacks it (--with-pull: always, --no-pull: never).
When a step fails, the pod and container it created are removed again.` + lifecycleExit,
		Example: `  crisp run container.json pod.json
  crisp run --no-pull --runtime runsc ctr.yaml pod.yaml`,
		Args: argsRange(2, 2, "CONTAINER_CONFIG POD_CONFIG"),
		RunE: runOptions(f, o),
	}
	o.bind(cmd.Flags())
	cmd.Flags().StringVar(&o.Runtime, "runtime", "", "runtime handler for the pod (the runtime defines them)")
	return cmd
}
