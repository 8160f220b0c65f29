package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/lifecycle"
)

// logsFlags are the flags of `crisp logs`, crictl's names and defaults.
type logsFlags struct {
	cmdutil.Verb
	lifecycle.LogsOptions
	Since    string
	tailFlag bool // --tail was given
}

func (o *logsFlags) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	o.tailFlag = cmd.Flags().Changed("tail")
	return o.Verb.Complete(f, cmd, args)
}

func (o *logsFlags) Validate() error {
	if err := o.Check(o.Since, o.tailFlag, time.Now()); err != nil {
		return cmdutil.UsageError{Err: err}
	}
	return nil
}

func (o *logsFlags) Run(ctx context.Context) error {
	return o.WithRuntime(func(c *client.Client) error {
		return lifecycle.Logs(ctx, c, o.Args[0], o.LogsOptions, o.Out(), o.ErrOut())
	})
}

func newLogsCommand(f *cmdutil.Factory) *cobra.Command {
	o := &logsFlags{}
	cmd := &cobra.Command{
		Use:     "logs [flags] CONTAINER",
		Short:   "Print the logs of a container",
		Long:    helpLong("logs"),
		Example: helpExample("logs"),
		Args:    cmdutil.ArgsRange(1, 1, "one CONTAINER"),
		RunE:    runOptions(f, o),
	}
	fs := cmd.Flags()
	fs.BoolVarP(&o.Follow, "follow", "f", false, "follow the log until the container stops")
	fs.BoolVarP(&o.Previous, "previous", "p", false, "the log of the container's previous attempt")
	fs.BoolVarP(&o.Reopen, "reopen", "r", false, "ask the runtime to reopen the log file first")
	fs.Int64Var(&o.Tail, "tail", -1, "lines to show from the end (-1: all)")
	fs.Int64Var(&o.LimitBytes, "limit-bytes", -1, "bytes to show at most (-1: no limit)")
	fs.StringVar(&o.Since, "since", "", "show lines since a time (2013-01-02T13:23:37Z) or a duration ago (42m)")
	fs.BoolVarP(&o.Timestamps, "timestamps", "t", false, "prefix each line with its time")
	fs.StringVarP(&o.Stream, "stream", "s", "", "show only stdout or stderr")
	return cmd
}
