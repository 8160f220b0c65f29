package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cmdutil"
	"github.com/crisp-cri/crisp/internal/helptext"
	"github.com/crisp-cri/crisp/internal/probe"
)

type benchOptions struct {
	f      *cmdutil.Factory
	target targetOptions
	Size   int64
	Runs   int
}

func newBenchCommand(f *cmdutil.Factory) *cobra.Command {
	o := &benchOptions{f: f}
	cmd := &cobra.Command{
		Use:               "bench CONTAINER [--pod POD] [--port N] [-o json] [--size BYTES] [--runs N]",
		Short:             "Measure exec latency and exec and port-forward throughput per transport",
		Long:              helptext.Long("bench"),
		Example:           helptext.Example("bench"),
		Args:              cmdutil.ExactArgs(1, "a CONTAINER"),
		ValidArgsFunction: completeContainers(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.target.Container = args[0]
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	o.target.addFlags(cmd.Flags())
	o.target.Trace.CloseAfter(cmd) // traceflags.go
	cmd.Flags().Int64Var(&o.Size, "size", 64<<20, "bytes each throughput run moves")
	cmd.Flags().IntVar(&o.Runs, "runs", 5, "runs each throughput median is of")
	return cmd
}

func (o *benchOptions) Validate() error {
	if o.Size <= 0 {
		return cmdutil.UsageErrorf("--size must be positive, got %d", o.Size)
	}
	if o.Runs <= 0 {
		return cmdutil.UsageErrorf("--runs must be positive, got %d", o.Runs)
	}
	return o.target.validate()
}

func (o *benchOptions) Run(ctx context.Context) error {
	env, t, err := o.target.connect(ctx, o.f)
	if err != nil {
		return err
	}
	defer func() { _ = env.Client.Close() }() // closing a gRPC connection reports nothing to act on
	b := &probe.Bencher{URLs: env.URLs, Streamer: env.Streamer, Size: o.Size, Runs: o.Runs}
	rep, err := b.Run(ctx, t)
	if err != nil {
		return fmt.Errorf("bench of container %s at %s: %w", t.ContainerID, env.Client.Endpoint, err)
	}
	if err := cmdutil.PrintData(o.f.Streams.Out, o.f.Global.Output, rep, rep.WriteTable); err != nil {
		return err
	}
	if failed := rep.Failures(); len(failed) > 0 {
		for _, f := range failed {
			_, _ = fmt.Fprintln(o.f.Streams.ErrOut, "crisp: bench: "+f) // the error stream is the last resort: a failed write there has nowhere to go
		}
		return cmdutil.ErrReported
	}
	return nil
}
