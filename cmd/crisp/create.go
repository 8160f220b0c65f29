package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/lifecycle"
)

// createOptions are the flags of `crisp create`.
type createOptions struct{ pullFlags }

func (o *createOptions) Validate() error { return o.validate(lifecycle.PullNever) }

func (o *createOptions) Run(ctx context.Context) error {
	return o.withRuntime(func(c *client.Client) error {
		return lifecycle.Create(ctx, c, o.args[0], o.args[1], o.args[2], o.Pull, o.out(), o.errOut())
	})
}

func newCreateCommand(f *factory) *cobra.Command {
	o := &createOptions{}
	cmd := &cobra.Command{
		Use:   "create [flags] POD CONTAINER_CONFIG POD_CONFIG",
		Short: "Create a container in a pod from config files",
		Long: `Create a container in POD (ID, ID prefix or name) from a ContainerConfig file,
with the PodSandboxConfig file the pod was made from (CRI asks for it again),
and print its ID. Both files are JSON or YAML. The image is not pulled unless
--with-pull is given.` + lifecycleExit,
		Example: `  crisp create 9c1e container.json pod.json
  crisp create --with-pull --creds user:secret web ctr.yaml pod.yaml`,
		Args: argsRange(3, 3, "POD CONTAINER_CONFIG POD_CONFIG"),
		RunE: runOptions(f, o),
	}
	o.bind(cmd.Flags())
	return cmd
}
