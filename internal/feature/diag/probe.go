package diag

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/probe"
)

// Probe is `crisp probe`'s options.
type Probe struct {
	F      *cmdutil.Factory
	Target Target
	// Command replaces the exec probe's `true` (split on spaces).
	Command  string
	Timeout  time.Duration
	NodeName string
}

// Complete takes the factory and the CONTAINER.
func (o *Probe) Complete(f *cmdutil.Factory, _ *cobra.Command, args []string) error {
	o.F, o.Target.Container = f, args[0]
	return nil
}

// Validate rejects a blank --command, a non-positive --attempt-timeout and
// bad target flags.
func (o *Probe) Validate() error {
	if o.Command != "" && len(strings.Fields(o.Command)) == 0 {
		return cmdutil.UsageErrorf("--command is blank")
	}
	if o.Timeout <= 0 {
		return cmdutil.UsageErrorf("--attempt-timeout must be positive, got %s", o.Timeout)
	}
	return o.Target.Validate()
}

// Run probes the target and prints the report; reaching nothing at all is
// an error.
func (o *Probe) Run(ctx context.Context) error {
	env, t, err := o.Target.connect(ctx, o.F)
	if err != nil {
		return err
	}
	defer func() { _ = env.Client.Close() }() // closing a gRPC connection reports nothing to act on
	t.Command = strings.Fields(o.Command)
	p := &probe.Prober{URLs: env.URLs, Streamer: env.Streamer, Timeout: o.Timeout, Progress: progressf(o.F, "probe")}
	rep, err := p.Run(ctx, t)
	if err != nil {
		return fmt.Errorf("probe of container %s at %s: %w", t.ContainerID, env.Client.Endpoint, err)
	}
	rep.Origin = probe.NewOrigin(probe.KindProbe, probe.NodeName(o.NodeName, nil, nil))
	if err := cmdutil.PrintData(o.F.Streams.Out, o.F.Global.Output, rep, func(w io.Writer) error {
		rep.WriteTable(w, o.F.Global.Verbose > 0)
		return nil
	}); err != nil {
		return err
	}
	return rep.ReachedNothing()
}

// Bench is `crisp bench`'s options.
type Bench struct {
	F      *cmdutil.Factory
	Target Target
	Size   int64
	Runs   int
}

// Complete takes the factory and the CONTAINER.
func (o *Bench) Complete(f *cmdutil.Factory, _ *cobra.Command, args []string) error {
	o.F, o.Target.Container = f, args[0]
	return nil
}

// Validate rejects a non-positive --size or --runs and bad target flags.
func (o *Bench) Validate() error {
	if o.Size <= 0 {
		return cmdutil.UsageErrorf("--size must be positive, got %d", o.Size)
	}
	if o.Runs <= 0 {
		return cmdutil.UsageErrorf("--runs must be positive, got %d", o.Runs)
	}
	return o.Target.Validate()
}

// Run measures the target and prints the report; a failed measurement is
// named on stderr and is cmdutil.ErrReported.
func (o *Bench) Run(ctx context.Context) error {
	env, t, err := o.Target.connect(ctx, o.F)
	if err != nil {
		return err
	}
	defer func() { _ = env.Client.Close() }() // closing a gRPC connection reports nothing to act on
	b := &probe.Bencher{URLs: env.URLs, Streamer: env.Streamer, Size: o.Size, Runs: o.Runs}
	rep, err := b.Run(ctx, t)
	if err != nil {
		return fmt.Errorf("bench of container %s at %s: %w", t.ContainerID, env.Client.Endpoint, err)
	}
	if err := cmdutil.PrintData(o.F.Streams.Out, o.F.Global.Output, rep, rep.WriteTable); err != nil {
		return err
	}
	if failed := rep.Failures(); len(failed) > 0 {
		for _, f := range failed {
			_, _ = fmt.Fprintln(o.F.Streams.ErrOut, "crisp: bench: "+f) // the error stream is the last resort: a failed write there has nowhere to go
		}
		return cmdutil.ErrReported
	}
	return nil
}
