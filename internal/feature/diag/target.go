// Package diag runs crisp's diagnostics commands (probe, smoke and bench)
// for cmd/crisp: it dials the runtime, resolves the target, runs
// internal/feature/probe's checks and prints the reports. cmd/crisp owns the
// commands' options: it binds their flags to these structs' fields and
// checks them before Run.
package diag

import (
	"context"
	"fmt"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/probe"
)

// Target is what probe, smoke and bench run against: the container, its
// pod, a port for port-forward checks, and the streaming TLS and trace
// groups (closed by the command's Run).
type Target struct {
	Container string
	Pod       string
	Port      int32
	TLS       cmdutil.TLSFlags
	Trace     cmdutil.TraceFlags
}

// dial dials the runtime with the factory's client constructor and builds the streamer with the TLS settings;
// the caller closes env.Client.
func (o *Target) dial(f *cmdutil.Factory) (*probe.Env, error) {
	settings, err := f.Settings()
	if err != nil {
		return nil, err
	}
	tlsCfg, err := o.TLS.Config(settings.File, f.Streams.ErrOut)
	if err != nil {
		return nil, err
	}
	return probe.Dial(f.Dialer(), settings, tlsCfg, f.Global.Verbose, f.Streams.ErrOut, o.Trace.Apply)
}

// connect dials the runtime and resolves the target, for probe and bench;
// the caller closes env.Client.
func (o *Target) connect(ctx context.Context, f *cmdutil.Factory) (*probe.Env, probe.Target, error) {
	env, err := o.dial(f)
	if err != nil {
		return nil, probe.Target{}, err
	}
	t, err := env.Resolve(ctx, o.Container, o.Pod, o.Port)
	if err != nil {
		_ = env.Client.Close() // the resolution error is the one to report
		return nil, probe.Target{}, err
	}
	return env, t, nil
}

// progressf prints what a diagnostics command is waiting for on stderr
// (the report is stdout's), so a slow runtime does not look like a hang.
func progressf(f *cmdutil.Factory, name string) func(format string, args ...any) {
	return func(format string, args ...any) {
		_, _ = fmt.Fprintf(f.Streams.ErrOut, "crisp: "+name+": "+format+"\n", args...) // the error stream is the last resort: a failed write there has nowhere to go
	}
}
