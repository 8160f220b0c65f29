package main

import (
	"context"
	"fmt"
	"io"
	"math"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/probe"
)

type benchOptions struct {
	f      *factory
	target targetOptions
	Size   int64
	Runs   int
}

func newBenchCommand(f *factory) *cobra.Command {
	o := &benchOptions{f: f}
	cmd := &cobra.Command{
		Use:   "bench CONTAINER [--pod POD] [--port N] [-o json] [--size BYTES] [--runs N]",
		Short: "Measure exec latency and exec and port-forward throughput per transport",
		Long: `Measure, on every step of the --transport auto order that the runtime accepts
(exec: WebSocket v5, SPDY, WebSocket v4; port-forward: SPDY, the
SPDY/3.1+portforward.k8s.io tunnel, direct WebSocket v4):

  exec-true-latency  CRI Exec call, upgrade and ` + "`true`" + `, median of 20 (ms)
  exec-stdout        SIZE zero bytes from ` + "`dd if=/dev/zero bs=1M`" + ` read through exec (MB/s)
  exec-stdin         SIZE bytes written to ` + "`dd bs=1M iflag=fullblock | wc -c`" + `, which
                     must count them all (MB/s)
  port-forward-echo  SIZE bytes through --port and back (MB/s; the port must
                     reach a TCP echo server, e.g. ` + "`socat TCP-LISTEN:N,fork EXEC:cat`" + `)

Throughput figures are medians of --runs runs; MB is 10^6 bytes.

EXIT STATUS
  0  every figure was measured
  1  a figure could not be measured (the runtime accepted no protocol for a
     call, or a run failed), or the runtime could not be reached
  2  bad flags or arguments`,
		Example: `  crisp bench web-1
  crisp bench web-1 --port 7777 --size 268435456 --runs 3 -o json`,
		Args:              exactArgs(1, "a CONTAINER"),
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
	o.target.Trace.closeAfter(cmd) // traceflags.go
	cmd.Flags().Int64Var(&o.Size, "size", 64<<20, "bytes each throughput run moves")
	cmd.Flags().IntVar(&o.Runs, "runs", 5, "runs each throughput median is of")
	return cmd
}

func (o *benchOptions) Validate() error {
	if o.Size <= 0 {
		return usageErrorf("--size must be positive, got %d", o.Size)
	}
	if o.Runs <= 0 {
		return usageErrorf("--runs must be positive, got %d", o.Runs)
	}
	return o.target.validate()
}

func (o *benchOptions) Run(ctx context.Context) error {
	env, t, err := o.target.connect(ctx, o.f)
	if err != nil {
		return err
	}
	defer env.client.Close()
	b := &probe.Bencher{URLs: env.urls, Streamer: env.streamer, Size: o.Size, Runs: o.Runs}
	rep, err := b.Run(ctx, t)
	if err != nil {
		return fmt.Errorf("bench of container %s at %s: %w", t.ContainerID, env.client.Endpoint, err)
	}
	if err := printData(o.f.Streams.Out, o.f.Global.Output, rep, func(w io.Writer) error {
		printBenchTable(w, rep)
		return nil
	}); err != nil {
		return err
	}
	failed := append([]string(nil), rep.Unusable...)
	for _, r := range rep.Results {
		for _, fig := range r.Figures {
			if fig.Error != "" {
				failed = append(failed, fmt.Sprintf("%s %s: %s", r.Protocol, fig.Name, fig.Error))
			}
		}
	}
	if len(failed) > 0 {
		for _, f := range failed {
			fmt.Fprintln(o.f.Streams.ErrOut, "crisp: bench: "+f)
		}
		return errReported
	}
	return nil
}

func printBenchTable(w io.Writer, rep *probe.BenchReport) {
	row(w, "CALL", "TRANSPORT", "PROTOCOL", "FIGURE", "MEDIAN", "MIN", "MAX", "RUNS")
	for _, r := range rep.Results {
		proto := r.Name
		if r.Auto {
			proto += " (auto)"
		}
		for _, f := range r.Figures {
			switch {
			case f.Skipped != "":
				row(w, r.Call, r.Transport, proto, f.Name, "skipped: "+f.Skipped, "", "", "")
			case f.Error != "":
				row(w, r.Call, r.Transport, proto, f.Name, "error (see below)", "", "", "")
			default:
				row(w, r.Call, r.Transport, proto, f.Name, num(f.Median, f.Unit), num(f.Min, f.Unit), num(f.Max, f.Unit), f.Runs)
			}
		}
	}
	fmt.Fprintf(w, "\nthroughput runs move %d bytes each; MB/s is 10^6 bytes per second\n", rep.Size)
}

func num(v float64, unit string) string {
	if math.IsNaN(v) {
		return "-"
	}
	if unit == "ms" {
		return fmt.Sprintf("%.2f ms", v)
	}
	return fmt.Sprintf("%.0f %s", v, unit)
}
