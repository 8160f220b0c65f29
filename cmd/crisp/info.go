package main

import (
	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/cmdutil"
	"github.com/crisp-cri/crisp/internal/helptext"
	"github.com/crisp-cri/crisp/internal/output"
	"github.com/crisp-cri/crisp/internal/query"
)

func newInfoCommand(f *cmdutil.Factory) *cobra.Command {
	var quiet bool
	cmd := &cobra.Command{
		Use:     "info",
		Short:   "Show the runtime's status, conditions and configuration",
		Long:    helptext.Long("info"),
		Example: helptext.Example("info"),
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p := f.PrinterOr(cmd, output.JSON)
			return f.WithClient(func(c *client.Client) error { return query.Info(cmd.Context(), c, quiet, p) })
		},
	}
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "leave out the runtime's verbose info")
	return cmd
}
