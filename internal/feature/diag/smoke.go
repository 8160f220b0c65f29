package diag

import (
	"context"
	"errors"
	"fmt"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/probe"
)

// Smoke is one `crisp smoke`.
type Smoke struct {
	Target
	JUnit  string
	Strict bool
	Image  string
	// PodConfig is --pod-config's file; PodSandbox what it holds (read by
	// the command's Complete).
	PodConfig  string
	PodSandbox *runtimeapi.PodSandboxConfig
	Timeout    time.Duration
	NodeName   string
	// KubeletStopped: create the scratch pod even where a kubelet's pods are.
	KubeletStopped bool
}

// Run runs the checks, prints the report on f's streams in f's format and,
// with --junit, writes it as JUnit XML; a failed check is
// cmdutil.ErrReported.
func (o *Smoke) Run(ctx context.Context, f *cmdutil.Factory) error {
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	env, err := o.dial(f)
	if err != nil {
		return err
	}
	defer func() { _ = env.Client.Close() }() // closing a gRPC connection reports nothing to act on
	out := f.Streams.Out
	table := f.Global.Output == "table"
	smoker := &probe.Smoker{URLs: env.URLs, Streamer: env.Streamer, Strict: o.Strict, Waiting: progressf(f, "smoke")}
	if table {
		smoker.Progress = func(c probe.SmokeCheck) { _ = c.WriteLine(out) } // a lost progress line leaves the report intact
	}
	started := time.Now()
	rep, err := env.Smoke(ctx, smoker, probe.SmokeTarget{
		Container: o.Container, Pod: o.Pod, Port: o.Port,
		Image: o.Image, PodConfig: o.PodSandbox, KubeletStopped: o.KubeletStopped, Logf: progressf(f, "smoke"),
	})
	if err != nil {
		err = rep.Unfinished(ctx, err, o.Timeout) // rep may be nil: --image's set-up can run out of time too
	}
	if rep == nil || (table && len(rep.Checks) == 0 && err != nil) {
		return err // nothing ran: the error says why (JSON still gets a report that carries it)
	}
	rep.Origin = probe.NewOrigin(probe.KindSmoke, probe.NodeName(o.NodeName, nil, nil))
	if err != nil {
		rep.Error = err.Error() // the reports say it too, so that they agree with the exit status
	}
	if o.JUnit != "" {
		if jerr := rep.WriteJUnitFile(o.JUnit, started); jerr != nil {
			err = errors.Join(err, jerr)
		}
	}
	if table {
		if perr := rep.WriteSummary(out); perr != nil {
			return perr
		}
		if err != nil {
			return err
		}
		if !rep.OK() {
			return cmdutil.ErrReported
		}
		return nil
	}
	// JSON or YAML: the report is the last thing written. A container log
	// interleaves stdout and stderr in no fixed order, so a line on stderr
	// after the report could land inside it; the verdict goes first, and
	// the report carries it too.
	if err != nil {
		_, _ = fmt.Fprintln(f.Streams.ErrOut, "crisp:", err) // the error stream is the last resort: a failed write there has nowhere to go
		err = fmt.Errorf("%w (%w)", cmdutil.ErrReported, err)
	} else if !rep.OK() {
		_, _ = fmt.Fprintln(f.Streams.ErrOut, rep.Tally()) // as above
		err = cmdutil.ErrReported
	}
	if perr := cmdutil.PrintData(out, f.Global.Output, rep, nil); perr != nil {
		return errors.Join(perr, err)
	}
	return err
}
