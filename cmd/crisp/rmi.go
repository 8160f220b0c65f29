package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

// rmiOptions are `crisp rmi`'s flags (query.RMIOptions) and images.
type rmiOptions struct {
	cmdutil.Verb
	query.RMIOptions
}

// Validate wants images, -a or --prune.
func (o *rmiOptions) Validate() error {
	if len(o.Args) == 0 && !o.All && !o.Prune {
		return cmdutil.UsageErrorf("%s needs an IMAGE, -a or --prune", o.Path)
	}
	return nil
}

// Run removes the images.
func (o *rmiOptions) Run(ctx context.Context) error {
	o.Warn = o.F.Streams.ErrOut
	return o.WithRuntime(func(c *client.Client) error { return query.RMI(ctx, c, o.Args, o.RMIOptions, o.Out()) })
}

func newRmiCommand(f *cmdutil.Factory) *cobra.Command {
	o := &rmiOptions{}
	cmd := &cobra.Command{
		Use:     "rmi [IMAGE...]",
		Short:   "Remove images",
		Long:    helpLong("rmi"),
		Example: helpExample("rmi"),
		RunE:    runOptions(f, o),
	}
	cmd.Flags().BoolVarP(&o.All, "all", "a", false, "remove every image")
	cmd.Flags().BoolVarP(&o.Prune, "prune", "q", false, "remove every image no container uses")
	return cmd
}
