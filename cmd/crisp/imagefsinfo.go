package main

import (
	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/output"
	"github.com/crisp-cri/crisp/internal/query"
)

func newImageFsInfoCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "imagefsinfo",
		Short: "Show the image filesystems' usage",
		Long: `Show the filesystems the runtime keeps images and container layers on, with
their usage, in crictl's shape ({"status": ImageFsInfoResponse}). JSON by
default as crictl; -o table for a table, -o yaml or -o go-template too.

EXIT STATUS
  0  the runtime answered
  1  the runtime could not be reached or failed
  2  bad flags or arguments`,
		Example: `  crisp imagefsinfo
  crisp imagefsinfo -o table
  crisp imagefsinfo -o go-template --template '{{range .status.imageFilesystems}}{{.usedBytes.value}}{{end}}'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p := f.printerOr(cmd, output.JSON)
			return f.withClient(func(c *client.Client) error { return query.ImageFsInfo(cmd.Context(), c, p) })
		},
	}
}

func newRuntimeConfigCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "runtime-config",
		Short: "Show the runtime's configuration (cgroup driver)",
		Long: `Show the configuration the runtime reports through CRI, today its cgroup
driver, as crictl runtime-config does; -o json|yaml|go-template for the
RuntimeConfigResponse.

EXIT STATUS
  0  the runtime answered
  1  the runtime could not be reached, failed, or does not serve RuntimeConfig
  2  bad flags or arguments`,
		Example: `  crisp runtime-config
  crisp runtime-config -o json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.withClient(func(c *client.Client) error { return query.RuntimeConfig(cmd.Context(), c, f.printer()) })
		},
	}
}

func newEventsCommand(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:     "events",
		Aliases: []string{"event"},
		Short:   "Stream the runtime's container events",
		Long: `Stream container events (created, started, stopped, deleted) as the runtime
sends them, until interrupted, as crictl events does: one JSON object per
event by default, -o yaml, -o go-template --template T, or -o table for one
line per event. Runtimes that do not serve GetContainerEvents (containerd 1.6)
get a clear error.

EXIT STATUS
  0  interrupted, or the runtime ended the stream
  1  the runtime could not be reached, failed, or serves no events
  2  bad flags or arguments`,
		Example: `  crisp events
  crisp events -o table
  crisp events -o go-template --template '{{.containerEventType}} {{.containerId}}'`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p := f.printerOr(cmd, output.JSON)
			return f.withClient(func(c *client.Client) error { return query.Events(cmd.Context(), c, p) })
		},
	}
}
