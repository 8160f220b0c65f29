package doctor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/probe"
	"github.com/crisp-cri/crisp/internal/transport"
)

// DefaultCommand is the round trip's command.
const DefaultCommand = "true"

// defaultAttachWindow is how long the attach hop reads once upgraded, when
// the main process prints nothing.
const defaultAttachWindow = 100 * time.Millisecond

// Node is one `crisp doctor` on a node: the CRI socket's path to a
// container's streams. cmd/crisp binds the flags to its fields.
type Node struct {
	// Target is a CONTAINER or POD reference ("" checks the runtime only).
	Target string
	// Pod narrows a container name to one pod (ID, ID prefix or name):
	// crisp fleet's target carries one name in every pod of its run.
	Pod string
	// Port adds a port-forward round trip to it.
	Port int32
	// Command is the round trip's command, split on spaces.
	Command string
	Repeat  Repeated
	// HopTimeout bounds each hop.
	HopTimeout time.Duration
	JUnit      string
	NodeName   string
	TLS        cmdutil.TLSFlags
}

// Repeated is --repeat N --interval D: how often the path is walked.
type Repeated struct {
	Runs     int
	Interval time.Duration
}

// Run walks the path (Repeat.Runs times), prints the report on f's streams
// in f's format and writes the JUnit file; a failed hop is
// cmdutil.ErrReported after the report says why.
func (o *Node) Run(ctx context.Context, f *cmdutil.Factory) error {
	settings, err := f.Settings()
	if err != nil {
		return err
	}
	if !f.Global.MaxRetriesGiven {
		settings.MaxRetries = 0 // a socket that is not there is the finding, not a reason to wait
	}
	tlsCfg, err := o.TLS.Config(settings.File, f.Streams.ErrOut)
	if err != nil {
		return err
	}
	c, err := client.Dial(settings)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }() // closing a gRPC connection reports nothing to act on
	w := &walker{
		c:      c,
		cfg:    transport.NewConfig(transport.ConfigOptions{TLS: tlsCfg, UpgradeTimeout: settings.RequestTimeout, Verbose: f.Global.Verbose, LogLevel: 2, Out: f.Streams.ErrOut}),
		tlsCfg: tlsCfg, ref: o.Target, pod: o.Pod, port: o.Port, cmd: strings.Fields(o.Command), hopTimeout: o.HopTimeout,
		attachWindow: defaultAttachWindow,
	}
	if len(w.cmd) == 0 {
		w.cmd = []string{DefaultCommand}
	}
	if w.hopTimeout <= 0 {
		w.hopTimeout = client.DefaultRequestTimeout
	}
	started := time.Now()
	rep := newReport(ModeNode, probe.NodeName(o.NodeName, nil, nil))
	rep.Target = Target{Port: o.Port, Command: w.cmd}
	runErr := repeatWalk(ctx, rep, o.Repeat, w.walk)
	rep.Runtime = w.rt
	rep.Target.Container, rep.Target.Pod = w.target.Container, w.target.Pod
	return deliver(f, rep, o.JUnit, started, runErr)
}

// repeatWalk walks the path r.Runs times (once when zero) with r.Interval
// between runs, filling rep's hops and, for more than one run, its Repeat
// summary. It stops early only when ctx ends (the error).
func repeatWalk(ctx context.Context, rep *Report, r Repeated, walk func(context.Context) []Hop) error {
	runs := max(r.Runs, 1)
	t := newTally()
	var err error
	for i := range runs {
		if i > 0 && r.Interval > 0 {
			timer := time.NewTimer(r.Interval)
			select {
			case <-ctx.Done():
			case <-timer.C:
			}
			timer.Stop()
		}
		if ctx.Err() != nil {
			err = fmt.Errorf("doctor interrupted after %d of %d runs: %w", t.runs, runs, context.Cause(ctx))
			break
		}
		hops := walk(ctx)
		if ctx.Err() != nil {
			err = fmt.Errorf("doctor interrupted after %d of %d runs: %w", t.runs, runs, context.Cause(ctx))
			break
		}
		t.add(hops)
	}
	rep.Hops = t.keep
	if rep.Hops == nil {
		rep.Hops = []Hop{}
	}
	if runs > 1 {
		rep.Repeat = t.summary(r.Interval)
	}
	if err != nil {
		rep.Error = err.Error()
	}
	return err
}

// deliver prints rep in f's format, writes the JUnit file when asked, and
// turns the verdict into the command's error.
func deliver(f *cmdutil.Factory, rep *Report, junit string, started time.Time, runErr error) error {
	rep.finish()
	var err error
	if junit != "" {
		err = rep.WriteJUnitFile(junit, started)
	}
	if f.Global.Output == "table" || f.Global.Output == "" {
		if perr := rep.WriteText(f.Streams.Out); perr != nil {
			return errors.Join(perr, err, runErr)
		}
	} else {
		// JSON and YAML: the verdict on stderr first, then the report.
		if !rep.OK {
			_, _ = fmt.Fprintln(f.Streams.ErrOut, "crisp: doctor: "+rep.Verdict()) // the error stream is the last resort: a failed write there has nowhere to go
		}
		if perr := cmdutil.PrintData(f.Streams.Out, f.Global.Output, rep, nil); perr != nil {
			return errors.Join(perr, err, runErr)
		}
	}
	if runErr != nil {
		return errors.Join(fmt.Errorf("%w (%w)", cmdutil.ErrReported, runErr), err)
	}
	if !rep.OK {
		return errors.Join(cmdutil.ErrReported, err)
	}
	return err
}

// Verdict is the report's one-line verdict, both halves' with
// --node-side.
func (r *Report) Verdict() string {
	v := r.ownVerdict()
	if r.NodeSide != nil {
		v += "; node side on " + or(r.NodeSide.Node, "the pod's node") + ": " + r.NodeSide.ownVerdict()
	}
	return v
}

func (r *Report) ownVerdict() string {
	if r.Error != "" {
		return r.Error
	}
	if r.Repeat != nil {
		if r.Repeat.FailedRuns == 0 {
			return fmt.Sprintf("healthy: %d runs, every hop passed", r.Repeat.Runs)
		}
		worst := r.Repeat.Failures[0]
		return fmt.Sprintf("%d of %d runs failed (%.1f%%); most at hop %s: %s (%d)", r.Repeat.FailedRuns, r.Repeat.Runs,
			100*float64(r.Repeat.FailedRuns)/float64(r.Repeat.Runs), worst.Hop, worst.Signature, worst.Count)
	}
	if h, failed := r.FirstFailure(); failed {
		return fmt.Sprintf("broken at hop %s: %s", h.Name, firstLine(h.Error))
	}
	return fmt.Sprintf("healthy: every hop passed (%d hops)", len(r.Hops))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
