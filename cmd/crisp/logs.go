package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/lifecycle"
	"github.com/crisp-cri/crisp/internal/logs"
)

// logsFlags are the flags of `crisp logs`, crictl's names and defaults.
type logsFlags struct {
	lifecycle.LogsOptions
	Since string
}

func newLogsCommand(f *factory) *cobra.Command {
	o := &logsFlags{}
	cmd := &cobra.Command{
		Use:   "logs [flags] CONTAINER",
		Short: "Print the logs of a container",
		Long: `Print a container's log (a full ID, a unique ID prefix or a unique name), read
from the file the runtime names in its status, on this host, as crictl and
kubelet read it: partial lines joined, -f following across log rotation until
the container stops. The container's stdout goes to stdout, its stderr to
stderr.` + lifecycleExit,
		Example: `  crisp logs web
  crisp logs -f --tail 10 web
  crisp logs --since 5m -t 4f2a
  crisp logs -p web`,
		Args: argsRange(1, 1, "one CONTAINER"),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch o.Stream {
			case "", logs.Stdout, logs.Stderr:
			default:
				return usageErrorf("--stream %q: want stdout or stderr", o.Stream)
			}
			if cmd.Flags().Changed("tail") && o.Stream != "" {
				return usageErrorf("--tail and --stream cannot be combined (as in crictl)")
			}
			since, err := logs.ParseSince(o.Since, time.Now())
			if err != nil {
				return usageError{err}
			}
			o.Options.Since = since
			return withRuntime(f, 0, func(c *client.Client) error {
				return lifecycle.Logs(cmd.Context(), c, args[0], o.LogsOptions, f.Streams.Out, f.Streams.ErrOut)
			})
		},
	}
	fs := cmd.Flags()
	fs.BoolVarP(&o.Follow, "follow", "f", false, "follow the log until the container stops")
	fs.BoolVarP(&o.Previous, "previous", "p", false, "the log of the container's previous attempt")
	// crictl also has -r for --reopen; crisp's -r is --runtime-endpoint.
	fs.BoolVar(&o.Reopen, "reopen", false, "ask the runtime to reopen the log file first")
	fs.Int64Var(&o.Tail, "tail", -1, "lines to show from the end (-1: all)")
	fs.Int64Var(&o.LimitBytes, "limit-bytes", -1, "bytes to show at most (-1: no limit)")
	fs.StringVar(&o.Since, "since", "", "show lines since a time (2013-01-02T13:23:37Z) or a duration ago (42m)")
	fs.BoolVarP(&o.Timestamps, "timestamps", "t", false, "prefix each line with its time")
	fs.StringVarP(&o.Stream, "stream", "s", "", "show only stdout or stderr")
	return cmd
}
