package main

import (
	"errors"
	"io"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/cri/client"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

// crispVersion is set at build time with -ldflags "-X main.crispVersion=...".
var crispVersion = "dev"

func newVersionCommand(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Show the runtime's name, version and CRI API version",
		Example: helpExample("version"),
		Long:    helpLong("version"),
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			err := f.WithClient(func(c *client.Client) error {
				return query.Version(cmd.Context(), c, crispVersion, f.Printer())
			})
			if err != nil {
				// The client's own version is known whatever the runtime's
				// state: print it, then the error (exit 1).
				if perr := f.Printer().Print(query.VersionReport{ClientVersion: crispVersion}, func(w io.Writer) error {
					output.Row(w, "Client:", "crisp "+crispVersion)
					return nil
				}); perr != nil {
					return errors.Join(err, perr)
				}
			}
			return err
		},
	}
}
