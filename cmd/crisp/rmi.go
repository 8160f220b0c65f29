package main

import (
	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/cri/client"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

func newRmiCommand(f *cmdutil.Factory) *cobra.Command {
	var o query.RMIOptions
	cmd := &cobra.Command{
		Use:     "rmi [IMAGE...]",
		Short:   "Remove images",
		Long:    helpLong("rmi"),
		Example: helpExample("rmi"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !o.All && !o.Prune {
				return cmdutil.UsageErrorf("%s needs an IMAGE, -a or --prune", cmd.CommandPath())
			}
			return f.WithClient(func(c *client.Client) error { return query.RMI(cmd.Context(), c, args, o, f.Streams.Out) })
		},
	}
	cmd.Flags().BoolVarP(&o.All, "all", "a", false, "remove every image")
	cmd.Flags().BoolVarP(&o.Prune, "prune", "q", false, "remove every image no container uses")
	return cmd
}
