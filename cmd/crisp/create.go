package main

import (
	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/lifecycle"
)

func newCreateCommand(f *factory) *cobra.Command {
	o := &pullFlags{}
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
		RunE: func(cmd *cobra.Command, args []string) error {
			pull, err := o.policy(f, lifecycle.PullNever)
			if err != nil {
				return err
			}
			return withRuntime(f, o.CancelTimeout, func(c *client.Client) error {
				return lifecycle.Create(cmd.Context(), c, args[0], args[1], args[2], pull, f.Streams.Out, f.Streams.ErrOut)
			})
		},
	}
	o.bind(cmd.Flags())
	return cmd
}
