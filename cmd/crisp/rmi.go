package main

import (
	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/query"
)

func newRmiCommand(f *factory) *cobra.Command {
	var o query.RMIOptions
	cmd := &cobra.Command{
		Use:   "rmi [IMAGE...]",
		Short: "Remove images",
		Long: `Remove images from the runtime's image service, as crictl rmi does, printing
"Deleted: TAG" for each tag removed. IMAGE is a name, name:tag, digest or ID;
-a removes every image, -q/--prune every image no container uses. A failure
on one image does not stop the others.

EXIT STATUS
  0  every image named was removed
  1  an image was not found or could not be removed, or the runtime could not
     be reached
  2  bad flags or arguments`,
		Example: `  crisp rmi busybox:1.36
  crisp rmi --prune
  crisp rmi -a`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !o.All && !o.Prune {
				return usageErrorf("%s needs an IMAGE, -a or --prune", cmd.CommandPath())
			}
			return f.withClient(func(c *client.Client) error { return query.RMI(cmd.Context(), c, args, o, f.Streams.Out) })
		},
	}
	cmd.Flags().BoolVarP(&o.All, "all", "a", false, "remove every image")
	cmd.Flags().BoolVarP(&o.Prune, "prune", "q", false, "remove every image no container uses")
	return cmd
}
