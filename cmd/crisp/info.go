package main

import (
	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/output"
	"github.com/crisp-cri/crisp/internal/query"
)

func newInfoCommand(f *factory) *cobra.Command {
	var quiet bool
	cmd := &cobra.Command{
		Use:   "info",
		Short: "Show the runtime's status, conditions and configuration",
		Long: `Show the runtime's status in crictl's shape: "status" (RuntimeReady,
NetworkReady), "runtimeHandlers" and "features" when the runtime reports
them, and the runtime's verbose info keys beside them ("config" is an object).
JSON by default; -o yaml, -o go-template --template T, or -o table for the
conditions. -q leaves the verbose info out.

EXIT STATUS
  0  the runtime answered
  1  the runtime could not be reached or failed
  2  bad flags or arguments`,
		Example: `  crisp info
  crisp info | jq .config
  crisp info -o table`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p := f.printerOr(cmd, output.JSON)
			return f.withClient(func(c *client.Client) error { return query.Info(cmd.Context(), c, quiet, p) })
		},
	}
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "leave out the runtime's verbose info")
	return cmd
}
