package main

import (
	"errors"
	"io"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/output"
	"github.com/crisp-cri/crisp/internal/query"
)

// crispVersion is set at build time with -ldflags "-X main.crispVersion=...".
var crispVersion = "dev"

func newVersionCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Show the runtime's name, version and CRI API version",
		Example: `  crisp version
  crisp -r unix:///run/containerd/containerd.sock version -o json`,
		Long: `Show crisp's version and the runtime's name, version and CRI API version.

EXIT STATUS
  0  the runtime answered
  1  the runtime could not be reached or failed (crisp's own version is
     printed first; crisp --version prints only that)
  2  bad flags or arguments`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			err := f.withClient(func(c *client.Client) error {
				return query.Version(cmd.Context(), c, crispVersion, f.printer())
			})
			if err != nil {
				// The client's own version is known whatever the runtime's
				// state: print it, then the error (exit 1).
				if perr := f.printer().Print(query.VersionReport{ClientVersion: crispVersion}, func(w io.Writer) error {
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
