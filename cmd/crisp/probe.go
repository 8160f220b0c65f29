package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/cmdutil"
	"github.com/crisp-cri/crisp/internal/helptext"
	"github.com/crisp-cri/crisp/internal/probe"
)

// targetOptions are the flags probe, smoke and bench share: the container,
// its pod, a port for port-forward checks, and the streaming TLS group.
type targetOptions struct {
	Container string
	Pod       string
	Port      int32
	TLS       cmdutil.TLSFlags
	Trace     cmdutil.TraceFlags // traceflags.go
}

func (o *targetOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Pod, "pod", "", "pod for the port-forward checks (default: the container's pod)")
	fs.Int32Var(&o.Port, "port", 0, "remote port for port-forward checks (a TCP echo server there gives the most complete checks); 0 skips them")
	o.TLS.AddFlags(fs)
	o.Trace.AddFlags(fs)
}

func (o *targetOptions) validate() error {
	if o.Port < 0 || o.Port > 65535 {
		return cmdutil.UsageErrorf("--port must be between 1 and 65535, got %d", o.Port)
	}
	return o.TLS.Validate()
}

// connect dials the runtime and builds the streamer with the TLS
// settings; the caller closes env.Client.
func connect(f *cmdutil.Factory, tlsOpts cmdutil.TLSFlags, trace *cmdutil.TraceFlags) (*probe.Env, error) {
	settings, err := f.Settings()
	if err != nil {
		return nil, err
	}
	tlsCfg, err := tlsOpts.Config(settings.File, f.Streams.ErrOut)
	if err != nil {
		return nil, err
	}
	return probe.Dial(settings, tlsCfg, f.Global.Verbose, f.Streams.ErrOut, trace.Apply)
}

// connect dials the runtime and resolves the target, for probe and bench;
// the caller closes env.Client.
func (o *targetOptions) connect(ctx context.Context, f *cmdutil.Factory) (*probe.Env, probe.Target, error) {
	env, err := connect(f, o.TLS, &o.Trace)
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

type probeOptions struct {
	f      *cmdutil.Factory
	target targetOptions
	// Command replaces the exec probe's `true` (split on spaces).
	Command  string
	Timeout  time.Duration
	NodeName string
}

func newProbeCommand(f *cmdutil.Factory) *cobra.Command {
	o := &probeOptions{f: f}
	cmd := &cobra.Command{
		Use:               "probe CONTAINER [--pod POD] [--port N] [-o table|json]",
		Short:             "Show which streaming protocols the runtime speaks, and how well",
		Long:              helptext.Long("probe"),
		Example:           helptext.Example("probe"),
		Args:              cmdutil.ExactArgs(1, "a CONTAINER"),
		ValidArgsFunction: completeContainers(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	o.target.addFlags(cmd.Flags())
	o.target.Trace.CloseAfter(cmd) // traceflags.go
	cmd.Flags().StringVar(&o.Command, "command", "", "run `CMD` in the exec probes instead of \"true\" (split on spaces, e.g. --command 'ls /'); the output and stdin checks still use cat")
	cmd.Flags().DurationVar(&o.Timeout, "attempt-timeout", 10*time.Second, "bound on each attempt (RPC, upgrade and check)")
	addNodeNameFlag(cmd.Flags(), &o.NodeName)
	return cmd
}

func (o *probeOptions) Complete(args []string) error {
	o.target.Container = args[0]
	return nil
}

func (o *probeOptions) Validate() error {
	if o.Command != "" && len(strings.Fields(o.Command)) == 0 {
		return cmdutil.UsageErrorf("--command is blank")
	}
	if o.Timeout <= 0 {
		return cmdutil.UsageErrorf("--attempt-timeout must be positive, got %s", o.Timeout)
	}
	return o.target.validate()
}

func (o *probeOptions) Run(ctx context.Context) error {
	env, t, err := o.target.connect(ctx, o.f)
	if err != nil {
		return err
	}
	defer func() { _ = env.Client.Close() }() // closing a gRPC connection reports nothing to act on
	t.Command = strings.Fields(o.Command)
	p := &probe.Prober{URLs: env.URLs, Streamer: env.Streamer, Timeout: o.Timeout, Progress: progressf(o.f, "probe")}
	rep, err := p.Run(ctx, t)
	if err != nil {
		return fmt.Errorf("probe of container %s at %s: %w", t.ContainerID, env.Client.Endpoint, err)
	}
	rep.Origin = probe.NewOrigin(probe.KindProbe, probe.NodeName(o.NodeName, nil, nil))
	if err := cmdutil.PrintData(o.f.Streams.Out, o.f.Global.Output, rep, func(w io.Writer) error {
		rep.WriteTable(w, o.f.Global.Verbose > 0)
		return nil
	}); err != nil {
		return err
	}
	return rep.ReachedNothing() // tls_test.go
}

// progressf prints what a diagnostics command is waiting for on stderr
// (the report is stdout's), so a slow runtime does not look like a hang.
func progressf(f *cmdutil.Factory, name string) func(format string, args ...any) {
	return func(format string, args ...any) {
		_, _ = fmt.Fprintf(f.Streams.ErrOut, "crisp: "+name+": "+format+"\n", args...) // the error stream is the last resort: a failed write there has nowhere to go
	}
}
