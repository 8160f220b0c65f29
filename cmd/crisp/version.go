package main

import (
	"context"
	"errors"
	"io"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

// crispVersion is set at build time with -ldflags "-X main.crispVersion=...".
var crispVersion = "dev"

// versionOptions are `crisp version`'s: no flags of its own.
type versionOptions struct {
	cmdutil.Verb
}

// Run prints the runtime's version and crisp's.
func (o *versionOptions) Run(ctx context.Context) error {
	p := o.F.Printer()
	err := o.WithRuntime(func(c *client.Client) error { return query.Version(ctx, c, crispVersion, p) })
	if err != nil {
		// The client's own version is known whatever the runtime's
		// state: print it, then the error (exit 1).
		if perr := p.Print(query.VersionReport{ClientVersion: crispVersion}, func(w io.Writer) error {
			output.Row(w, "Client:", "crisp "+crispVersion)
			return nil
		}); perr != nil {
			return errors.Join(err, perr)
		}
	}
	return err
}

func newVersionCommand(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Show the runtime's name, version and CRI API version",
		Example: helpExample("version"),
		Long:    helpLong("version"),
		Args:    cmdutil.NoArgs,
		RunE:    runOptions(f, &versionOptions{}),
	}
}
