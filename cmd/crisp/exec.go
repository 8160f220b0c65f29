package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/session"
	"github.com/crisp-cri/crisp/internal/stream/transport"
)

// streamDeps are what exec, attach and port-forward need from the world
// (session.Deps); tests replace them with fakes.
type streamDeps = session.Deps

// execOptions are `crisp exec`'s flags and arguments.
type execOptions struct {
	Stdin     bool
	TTY       bool
	Sync      bool
	Timeout   time.Duration
	Transport string
	Protocol  string
	TLS       cmdutil.TLSFlags
	Trace     cmdutil.TraceFlags  // traceflags.go
	Record    session.RecordFlags // recordflags.go
	Many      execManyOptions     // execmany.go: --label, --pod, --name, --parallel

	many bool

	// ProtocolCache is --protocol-cache (protocache.go).
	ProtocolCache bool

	Container string
	Command   []string

	offers []transport.Offer
	deps   streamDeps
}

func newExecCommand(f *cmdutil.Factory) *cobra.Command {
	return execCommand(f, &execOptions{})
}

// execCommand binds o to the command; o.deps, when set (tests), replaces the
// factory's dependencies.
func execCommand(f *cmdutil.Factory, o *execOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:         "exec [-i] [-t] [-s] [--timeout D] [--transport T] [--protocol P] CONTAINER -- CMD [ARG...]",
		Short:       "Run a command in a running container",
		Long:        helpLong("exec"),
		Example:     helpExample("exec"),
		Annotations: map[string]string{cmdutil.PassThroughAnnotation: "true"},
		RunE:        runOptions(f, o),
	}
	cmd.Flags().SetInterspersed(false)
	fl := cmd.Flags()
	fl.BoolVarP(&o.Stdin, "stdin", "i", false, "pass stdin to the command")
	fl.BoolVarP(&o.TTY, "tty", "t", false, "allocate a pseudo-terminal (raw local terminal, resize propagated)")
	fl.BoolVarP(&o.Sync, "sync", "s", false, "run with the ExecSync call (no streaming); stdout and stderr printed whatever the exit code")
	fl.DurationVar(&o.Timeout, "timeout", 0, "with -s: how long the runtime lets the command run (0: no limit)")
	fl.StringVar(&o.Transport, "transport", string(transport.Auto), "streaming transport: auto, websocket or spdy")
	fl.StringVar(&o.Protocol, "protocol", "", "offer only this subprotocol, e.g. v4.channel.k8s.io or v4 (debugging)")
	fl.BoolVar(&o.ProtocolCache, "protocol-cache", true, session.ProtocolCacheUsage)
	o.TLS.AddFlags(fl)
	o.Trace.AddFlags(fl)
	o.Trace.CloseAfter(cmd)
	o.Record.AddFlags(fl)
	o.Record.CloseAfter(cmd)
	o.Many.addFlags(fl)
	return cmd
}

// Complete splits CONTAINER from the command; "--" after CONTAINER is
// optional (flag parsing stops at CONTAINER).
func (o *execOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	if o.deps.Stream == nil {
		o.deps = session.NewDeps(f)
	}
	if o.many = o.Many.selected(cmd); o.many {
		o.Many.complete(o, args)
	} else if len(args) > 0 {
		o.Container = args[0]
		o.Command = args[1:]
		if len(o.Command) > 0 && o.Command[0] == "--" {
			o.Command = o.Command[1:]
		}
	}
	if o.Sync && (cmd.Flags().Changed("transport") || cmd.Flags().Changed("protocol")) {
		return cmdutil.UsageErrorf("--transport and --protocol choose a streaming protocol; -s uses the ExecSync call, which has none")
	}
	return nil
}

// Validate rejects bad input before any connection is made.
func (o *execOptions) Validate() error {
	if o.many {
		return o.Many.validate(o)
	}
	if o.Container == "" {
		return cmdutil.UsageErrorf("exec needs a CONTAINER and a command: crisp exec [flags] CONTAINER -- CMD [ARG...]")
	}
	if len(o.Command) == 0 {
		return cmdutil.UsageErrorf("exec needs a command to run in %s: crisp exec [flags] %s -- CMD [ARG...]", o.Container, o.Container)
	}
	if o.Sync && (o.Stdin || o.TTY) {
		return cmdutil.UsageErrorf("-s (ExecSync) carries no stdin and no terminal: drop -i/-t, or drop -s to stream")
	}
	if o.Timeout < 0 {
		return cmdutil.UsageErrorf("--timeout must not be negative")
	}
	if o.Timeout > 0 && !o.Sync {
		return cmdutil.UsageErrorf("--timeout bounds an ExecSync call: use it with -s")
	}
	var err error
	if o.offers, err = session.ParseOffers(o.Transport, o.Protocol); err != nil {
		return err
	}
	return o.TLS.Validate()
}

// Run execs the command and returns its exit status as an error (nil for 0).
func (o *execOptions) Run(ctx context.Context) error {
	if o.many {
		return o.Many.run(ctx, o)
	}
	return o.deps.Exec(ctx, session.Exec{
		Container: o.Container, Command: o.Command, Stdin: o.Stdin, TTY: o.TTY, Sync: o.Sync, Timeout: o.Timeout,
		Offers: o.offers, TLS: o.TLS, Configure: o.Trace.Apply, Record: &o.Record, ProtocolCache: o.ProtocolCache,
	})
}
