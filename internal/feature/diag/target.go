// Package diag runs crisp's diagnostics commands (probe, smoke and bench)
// for cmd/crisp: their options as structs, checked and run here, the
// checks themselves in internal/feature/probe. cmd/crisp keeps the cobra commands
// and binds their flags to these structs.
package diag

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/probe"
)

// Target are the flags probe, smoke and bench share: the container, its
// pod, a port for port-forward checks, and the streaming TLS and trace
// groups.
type Target struct {
	Container string
	Pod       string
	Port      int32
	TLS       cmdutil.TLSFlags
	Trace     cmdutil.TraceFlags
}

// AddFlags binds --pod, --port and the TLS and trace groups.
func (o *Target) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Pod, "pod", "", "pod for the port-forward checks (default: the container's pod)")
	fs.Int32Var(&o.Port, "port", 0, "remote port for port-forward checks (a TCP echo server there gives the most complete checks); 0 skips them")
	o.TLS.AddFlags(fs)
	o.Trace.AddFlags(fs)
}

// AddNodeNameFlag adds --node-name, the name smoke and probe put in their
// JSON reports so that crisp report can merge the reports of many nodes.
func AddNodeNameFlag(fs *pflag.FlagSet, name *string) {
	fs.StringVar(name, "node-name", "", "node name recorded in the JSON report (default: $NODE_NAME, then the hostname)")
}

// Validate rejects a bad --port and bad TLS flags.
func (o *Target) Validate() error {
	if o.Port < 0 || o.Port > 65535 {
		return cmdutil.UsageErrorf("--port must be between 1 and 65535, got %d", o.Port)
	}
	return o.TLS.Validate()
}

// dial dials the runtime and builds the streamer with the TLS settings;
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
	return probe.Dial(settings, tlsCfg, f.Global.Verbose, f.Streams.ErrOut, o.Trace.Apply)
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
