package diag

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/probe"
)

// Smoke is `crisp smoke`'s options.
type Smoke struct {
	F         *cmdutil.Factory
	Target    Target
	JUnit     string
	Strict    bool
	Image     string
	PodConfig string
	Timeout   time.Duration
	NodeName  string
	// KubeletStopped: create the scratch pod even where a kubelet's pods are.
	KubeletStopped bool

	podCfg *runtimeapi.PodSandboxConfig
}

// Complete takes the factory and the optional CONTAINER, and reads
// --pod-config.
func (o *Smoke) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	o.F = f
	switch {
	case len(args) == 1:
		o.Target.Container = args[0]
	case len(args) > 1:
		return cmdutil.UsageErrorf("smoke takes one CONTAINER, got %d arguments", len(args))
	}
	if o.PodConfig != "" {
		var err error
		if o.podCfg, err = probe.LoadPodConfig(cmd.Context(), o.PodConfig); err != nil {
			return cmdutil.UsageError{Err: err}
		}
	}
	return nil
}

// Validate rejects flags that do not go together.
func (o *Smoke) Validate() error {
	switch {
	case o.Image == "" && o.Target.Container == "":
		return cmdutil.UsageErrorf("smoke needs a CONTAINER or --image IMAGE")
	case o.Image != "" && o.Target.Container != "":
		return cmdutil.UsageErrorf("smoke takes a CONTAINER or --image IMAGE, not both")
	case o.Image == "" && o.PodConfig != "":
		return cmdutil.UsageErrorf("--pod-config goes with --image")
	case o.Image == "" && o.KubeletStopped:
		return cmdutil.UsageErrorf("--kubelet-stopped goes with --image")
	case o.Image != "" && o.Target.Pod != "":
		return cmdutil.UsageErrorf("--pod goes with a CONTAINER; --image creates its own pod (use --pod-config to shape it)")
	case o.Timeout < 0:
		return cmdutil.UsageErrorf("--timeout must not be negative")
	}
	return o.Target.Validate()
}

// Run runs the checks, prints the report and, with --junit, writes it as
// JUnit XML; a failed check is cmdutil.ErrReported.
func (o *Smoke) Run(ctx context.Context) error {
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	env, err := o.Target.dial(o.F)
	if err != nil {
		return err
	}
	defer func() { _ = env.Client.Close() }() // closing a gRPC connection reports nothing to act on
	out := o.F.Streams.Out
	table := o.F.Global.Output == "table"
	smoker := &probe.Smoker{URLs: env.URLs, Streamer: env.Streamer, Strict: o.Strict, Waiting: progressf(o.F, "smoke")}
	if table {
		smoker.Progress = func(c probe.SmokeCheck) { _ = c.WriteLine(out) } // a lost progress line leaves the report intact
	}
	started := time.Now()
	rep, err := env.Smoke(ctx, smoker, probe.SmokeTarget{
		Container: o.Target.Container, Pod: o.Target.Pod, Port: o.Target.Port,
		Image: o.Image, PodConfig: o.podCfg, KubeletStopped: o.KubeletStopped, Logf: progressf(o.F, "smoke"),
	})
	if rep == nil || (table && len(rep.Checks) == 0 && err != nil) {
		return err // nothing ran: the error says why (JSON still gets a report that carries it)
	}
	rep.Origin = probe.NewOrigin(probe.KindSmoke, probe.NodeName(o.NodeName, nil, nil))
	if err != nil {
		// The reports say it too, so that they agree with the exit status.
		err = rep.Unfinished(ctx, err, o.Timeout)
		rep.Error = err.Error()
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
		_, _ = fmt.Fprintln(o.F.Streams.ErrOut, "crisp:", err) // the error stream is the last resort: a failed write there has nowhere to go
		err = fmt.Errorf("%w (%w)", cmdutil.ErrReported, err)
	} else if !rep.OK() {
		_, _ = fmt.Fprintln(o.F.Streams.ErrOut, rep.Tally()) // as above
		err = cmdutil.ErrReported
	}
	if perr := cmdutil.PrintData(out, o.F.Global.Output, rep, nil); perr != nil {
		return errors.Join(perr, err)
	}
	return err
}
