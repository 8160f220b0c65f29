package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/lifecycle"
)

// createOptions are the flags of `crisp create`.
type createOptions struct{ pullFlags }

func (o *createOptions) Validate() error { return o.ValidatePull(lifecycle.PullNever) }

func (o *createOptions) Run(ctx context.Context) error {
	return o.WithRuntime(func(c *client.Client) error {
		return lifecycle.Create(ctx, c, o.Args[0], o.Args[1], o.Args[2], o.Pull, o.Out(), o.ErrOut())
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
	o.Bind(cmd.Flags())
	return cmd
}
