package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/cri/client"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

func newImageFsInfoCommand(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "imagefsinfo",
		Short:   "Show the image filesystems' usage",
		Long:    helpLong("imagefsinfo"),
		Example: helpExample("imagefsinfo"),
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p := f.PrinterOr(cmd, output.JSON)
			return f.WithClient(func(c *client.Client) error { return query.ImageFsInfo(cmd.Context(), c, p) })
		},
	}
}

func newRuntimeConfigCommand(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "runtime-config",
		Short:   "Show the runtime's configuration (cgroup driver)",
		Long:    helpLong("runtime-config"),
		Example: helpExample("runtime-config"),
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.WithClient(func(c *client.Client) error { return query.RuntimeConfig(cmd.Context(), c, f.Printer()) })
		},
	}
}

func newEventsCommand(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "events",
		Aliases: []string{"event"},
		Short:   "Stream the runtime's container events",
		Long:    helpLong("events"),
		Example: helpExample("events"),
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p := f.PrinterOr(cmd, output.JSON)
			err := f.WithClient(func(c *client.Client) error { return query.Events(cmd.Context(), c, p) })
			if errors.Is(err, client.ErrEventsClosed) {
				// As crictl: said, and exit 0 (the runtime ended it cleanly).
				_, _ = fmt.Fprintf(f.Streams.ErrOut, "crisp: %v\n", err) // the error stream is the last resort: a failed write there has nowhere to go
				return nil
			}
			return err
		},
	}
}
