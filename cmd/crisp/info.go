package main

import (
	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/cri/client"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

func newInfoCommand(f *cmdutil.Factory) *cobra.Command {
	var quiet bool
	cmd := &cobra.Command{
		Use:     "info",
		Short:   "Show the runtime's status, conditions and configuration",
		Long:    helpLong("info"),
		Example: helpExample("info"),
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p := f.PrinterOr(cmd, output.JSON)
			return f.WithClient(func(c *client.Client) error { return query.Info(cmd.Context(), c, quiet, p) })
		},
	}
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "leave out the runtime's verbose info")
	return cmd
}
