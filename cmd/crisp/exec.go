package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/session"
	"github.com/crisp-cri/crisp/internal/transport"
)

// streamDeps are what exec, attach and port-forward need from the world
// (session.Deps); tests replace them with fakes.
type streamDeps = session.Deps

// execOptions are `crisp exec`'s flags and arguments: they bind to
// session.Exec's fields, which Run hands to the session layer as they are.
type execOptions struct {
	session.Exec
	Many session.Many // --label, --pod, --name, --parallel (addManyFlags)

	many bool
	// ttyGiven and offersGiven record, for Validate, whether -t and
	// --transport or --protocol were on the command line.
	ttyGiven, offersGiven bool

	deps streamDeps
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
	fl.BoolVarP(&o.Stdin, "stdin", "i", false, "pass stdin to the command (also --interactive, crictl's name)")
	cmdutil.Alias(fl, "interactive", "stdin")
	fl.BoolVarP(&o.TTY, "tty", "t", false, "allocate a pseudo-terminal (raw local terminal, resize propagated)")
	fl.BoolVarP(&o.Sync, "sync", "s", false, "run with the ExecSync call (no streaming); stdout and stderr printed whatever the exit code")
	fl.Var((*cmdutil.Seconds)(&o.Timeout), "timeout", "with -s: how long the runtime lets the command run, in seconds as crictl (2) or a duration (2s); 0: no limit")
	fl.StringVarP(&o.Transport, "transport", "r", string(transport.Auto), "streaming transport: auto, websocket or spdy")
	fl.StringVar(&o.Protocol, "protocol", "", "offer only this subprotocol, e.g. v4.channel.k8s.io or v4 (debugging)")
	fl.BoolVar(&o.ProtocolCache, "protocol-cache", true, session.ProtocolCacheUsage)
	o.TLS.AddFlags(fl)
	o.Trace.AddFlags(fl)
	o.Peer.AddFlags(fl)
	o.Record.AddFlags(fl)
	addManyFlags(fl, &o.Many)
	return cmd
}

// Complete splits CONTAINER from the command; "--" after CONTAINER is
// optional (flag parsing stops at CONTAINER).
func (o *execOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	if o.deps.Stream == nil {
		o.deps = session.NewDeps(f)
	}
	o.ttyGiven = cmd.Flags().Changed("tty")
	o.offersGiven = cmd.Flags().Changed("transport") || cmd.Flags().Changed("protocol")
	if o.many = manySelected(cmd); o.many {
		o.completeMany(args)
	} else if len(args) > 0 {
		o.Container = args[0]
		o.Command = args[1:]
		if len(o.Command) > 0 && o.Command[0] == "--" {
			o.Command = o.Command[1:]
		}
	}
	return nil
}

// Validate rejects bad input before any connection is made.
func (o *execOptions) Validate() error {
	if err := o.Record.Validate(o.ttyGiven); err != nil {
		return err
	}
	if err := o.Trace.Validate(); err != nil {
		return err
	}
	if err := o.Peer.Validate(); err != nil {
		return err
	}
	if o.Sync && o.offersGiven {
		return cmdutil.UsageErrorf("--transport and --protocol choose a streaming protocol; -s uses the ExecSync call, which has none")
	}
	if o.many {
		return o.validateMany()
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
	if o.Offers, err = session.ParseOffers(o.Transport, o.Protocol); err != nil {
		return err
	}
	return o.TLS.Validate()
}

// Run execs the command and returns its exit status as an error (nil for
// 0), with a failure to write the trace or the recording joined to it.
func (o *execOptions) Run(ctx context.Context) (err error) {
	defer func() { err = errors.Join(err, o.Trace.Close(), o.Record.Close()) }()
	if o.many {
		err = o.deps.ExecMany(ctx, &o.Exec, &o.Many)
	} else {
		err = o.deps.Exec(ctx, &o.Exec)
	}
	if o.Many.IgnoreErrors && errors.As(err, new(cmdutil.RemoteStatus)) {
		return nil // crictl's -e: the command's status is not crisp's
	}
	return err
}

// addManyFlags binds exec's flags for running in every matching container
// (crictl's selectors, -q, -e, -x) to m, whose ExecMany (with
// session.FanOut) does the running.
func addManyFlags(fs *pflag.FlagSet, m *session.Many) {
	m.Select.Bind(fs, "instead of one CONTAINER, run in", false)
	fs.BoolVarP(&m.Quiet, "quiet", "q", false, "with many containers: no summary line")
	fs.BoolVarP(&m.IgnoreErrors, "ignore-errors", "e", false, "exit 0 whatever the command's status (crictl's -e)")
	// crictl's -x/--parallel is a switch; crisp runs in parallel anyway,
	// 8 at a time unless --parallel=N says otherwise.
	// (Main rewrites a bare -x or --parallel to --parallel=8: execSwitches.)
	fs.IntVarP(&m.Parallel, "parallel", "x", 8, "with many containers: sessions at once (-x or --parallel alone, as crictl's switch: 8)")
}

// manySelected reports whether exec runs in many containers.
func manySelected(cmd *cobra.Command) bool {
	for _, name := range []string{"label", "pod", "name", "image", "state", "latest", "last"} {
		if cmd.Flags().Changed(name) {
			return true
		}
	}
	return false
}

// completeMany takes every argument as the command (there is no CONTAINER).
func (o *execOptions) completeMany(args []string) {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	o.Container, o.Command = "", args
}

// validateMany refuses what one command in many containers cannot do, and
// builds the filter from --label and --name.
func (o *execOptions) validateMany() error {
	if o.Stdin || o.TTY {
		return cmdutil.UsageErrorf("exec --label/--pod/--name runs in many containers at once and one stdin cannot be shared safely between them: drop -i and -t (or exec into one CONTAINER)")
	}
	if o.Sync || o.Record.File != "" {
		return cmdutil.UsageErrorf("exec --label/--pod/--name streams to every container: -s and --record work with one CONTAINER only")
	}
	if len(o.Command) == 0 {
		return cmdutil.UsageErrorf("exec needs a command: crisp exec --label k=v -- CMD [ARG...]")
	}
	if o.Many.Parallel < 1 {
		return cmdutil.UsageErrorf("--parallel must be at least 1")
	}
	var err error
	if o.Many.Filter, err = o.Many.Select.Filter(); err != nil {
		return err
	}
	if o.Offers, err = session.ParseOffers(o.Transport, o.Protocol); err != nil {
		return err
	}
	return o.TLS.Validate()
}
