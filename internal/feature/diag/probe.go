package diag

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/probe"
)

// Probe is one `crisp probe`.
type Probe struct {
	Target
	// Command replaces the exec probe's `true` (split on spaces).
	Command  string
	Timeout  time.Duration
	NodeName string
}

// Run probes the target and prints the report on f's streams in f's
// format; reaching nothing at all is an error.
func (o *Probe) Run(ctx context.Context, f *cmdutil.Factory) error {
	env, t, err := o.connect(ctx, f)
	if err != nil {
		return err
	}
	defer func() { _ = env.Client.Close() }() // closing a gRPC connection reports nothing to act on
	t.Command = strings.Fields(o.Command)
	p := &probe.Prober{URLs: env.URLs, Streamer: env.Streamer, Timeout: o.Timeout, Progress: progressf(f, "probe")}
	rep, err := p.Run(ctx, t)
	if err != nil {
		return fmt.Errorf("probe of container %s at %s: %w", t.ContainerID, env.Client.Endpoint, err)
	}
	rep.Origin = probe.NewOrigin(probe.KindProbe, probe.NodeName(o.NodeName, nil, nil))
	if err := cmdutil.PrintData(f.Streams.Out, f.Global.Output, rep, func(w io.Writer) error {
		rep.WriteTable(w, f.Global.Verbose > 0)
		return nil
	}); err != nil {
		return err
	}
	return rep.ReachedNothing()
}

// Bench is one `crisp bench`.
type Bench struct {
	Target
	Size int64
	Runs int
}

// Run measures the target and prints the report on f's streams in f's
// format; a failed measurement is named on stderr and is
// cmdutil.ErrReported.
func (o *Bench) Run(ctx context.Context, f *cmdutil.Factory) error {
	env, t, err := o.connect(ctx, f)
	if err != nil {
		return err
	}
	defer func() { _ = env.Client.Close() }() // closing a gRPC connection reports nothing to act on
	b := &probe.Bencher{URLs: env.URLs, Streamer: env.Streamer, Size: o.Size, Runs: o.Runs}
	rep, err := b.Run(ctx, t)
	if err != nil {
		return fmt.Errorf("bench of container %s at %s: %w", t.ContainerID, env.Client.Endpoint, err)
	}
	if err := cmdutil.PrintData(f.Streams.Out, f.Global.Output, rep, rep.WriteTable); err != nil {
		return err
	}
	if failed := rep.Failures(); len(failed) > 0 {
		for _, line := range failed {
			_, _ = fmt.Fprintln(f.Streams.ErrOut, "crisp: bench: "+line) // the error stream is the last resort: a failed write there has nowhere to go
		}
		return cmdutil.ErrReported
	}
	return nil
}
