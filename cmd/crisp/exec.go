package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/moby/term"
	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/tty"

	"github.com/crisp-cri/crisp/internal/transport/remotecommand"
)

// streamDeps are what exec and attach need from the world; tests replace
// them with fakes.
type streamDeps struct {
	Streams ioStreams
	// Settings resolves the endpoint and the config file (for TLS keys).
	Settings func() (client.Settings, error)
	// Dial connects to the runtime.
	Dial func(client.Settings) (*client.Client, error)
	// Stream negotiates and runs a session (remotecommand.Stream).
	Stream func(ctx context.Context, op string, src transport.URLSource, offers []transport.Offer, cfg transport.Config, s remotecommand.Streams) (remotecommand.Result, error)
	// Verbose is the -v count.
	Verbose int
}

func newStreamDeps(f *factory) streamDeps {
	return streamDeps{
		Streams:  f.Streams,
		Settings: f.Settings,
		Dial:     client.Dial,
		Stream:   remotecommand.Stream,
		Verbose:  f.Global.Verbose,
	}
}

// connect resolves the endpoint, dials it and finds the container.
func (d streamDeps) connect(ctx context.Context, ref string) (*client.Client, client.Settings, *runtimeapi.Container, error) {
	settings, err := d.Settings()
	if err != nil {
		return nil, settings, nil, err
	}
	cli, err := d.Dial(settings)
	if err != nil {
		return nil, settings, nil, err
	}
	ctr, err := cli.ResolveContainer(ctx, ref)
	if err != nil {
		_ = cli.Close() // closing a gRPC connection reports nothing to act on
		return nil, settings, nil, err
	}
	return cli, settings, ctr, nil
}

func (d streamDeps) logf(format string, args ...any) {
	if d.Verbose >= 1 {
		_, _ = fmt.Fprintf(d.Streams.ErrOut, "crisp: "+format+"\n", args...) // the error stream is the last resort: a failed write there has nowhere to go
	}
}

// transportConfig is the transport configuration for -v, -vv and TLS.
func (d streamDeps) transportConfig(tlsOpts tlsOptions, settings client.Settings) (transport.Config, error) {
	tlsCfg, err := tlsOpts.Config(settings.File, d.Streams.ErrOut)
	if err != nil {
		return transport.Config{}, err
	}
	// A streaming server that takes the connection and never answers gets
	// as long as a gRPC call would.
	return transport.NewConfig(transport.ConfigOptions{
		TLS: tlsCfg, UpgradeTimeout: settings.RequestTimeout, Verbose: d.Verbose, Warnings: true, Out: d.Streams.ErrOut,
	}), nil
}

// terminal describes the local terminal, honouring the streams'
// IsTerminalIn override (tests).
func (d streamDeps) terminal(withIn bool) tty.Terminal {
	t := tty.Terminal{Out: d.Streams.Out}
	if withIn {
		t.In = d.Streams.In
	}
	t.IsTerminal = func(stream any) bool {
		if stream == d.Streams.In && d.Streams.IsTerminalIn != nil {
			return d.Streams.IsTerminalIn()
		}
		_, ok := term.GetFdInfo(stream)
		return ok
	}
	return t
}

// checkTTY applies "-t without a terminal on stdin warns and carries on
// without a TTY" (kubectl's behaviour, not crictl's error). Without -i the
// TTY needs no input terminal: only its output formatting changes.
func (d streamDeps) checkTTY(stdin, wantTTY bool) bool {
	if !wantTTY || !stdin {
		return wantTTY
	}
	if d.terminal(true).IsTerminalIn() {
		return true
	}
	_, _ = fmt.Fprintf(d.Streams.ErrOut, "crisp: warning: %s\n", tty.NoTTYWarning) // the error stream is the last resort: a failed write there has nowhere to go
	return false
}

// session runs a stream inside the terminal's guard: raw mode (with -t and
// -i on a terminal) restored on every way out, SIGINT/SIGTERM/SIGHUP
// handled, and the terminal size sent from the first moment and after every
// SIGWINCH. stdin is the session's input (attach wraps it to watch for the
// detach keys), or nil for none.
func (d streamDeps) session(ctx context.Context, op string, src transport.URLSource, offers []transport.Offer, cfg transport.Config, stdin io.Reader, withTTY bool) (remotecommand.Result, error) {
	t := d.terminal(stdin != nil && withTTY)
	var res remotecommand.Result
	err := t.Safe(ctx, func(ctx context.Context) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel() // ends the size queue so client-go's resize goroutine returns
		s := remotecommand.Streams{Stdin: stdin, Stdout: d.Streams.Out, TTY: withTTY,
			InteractiveStdin: stdin != nil && d.terminal(true).IsTerminalIn()}
		if !withTTY {
			s.Stderr = d.Streams.ErrOut // a TTY merges stderr into stdout
		} else {
			if q := t.MonitorSize(ctx); q != nil {
				s.Resize = sizeQueue{q}
			}
		}
		var err error
		res, err = d.Stream(ctx, op, src, offers, cfg, s)
		return err
	})
	return res, err
}

// sizeQueue adapts tty's size queue to client-go's.
type sizeQueue struct{ q *tty.SizeQueue }

func (s sizeQueue) Next() *remotecommand.TerminalSize {
	size := s.q.Next()
	if size == nil {
		return nil
	}
	return &remotecommand.TerminalSize{Width: size.Width, Height: size.Height}
}

// remoteStatus is the remote process's exit status, passed through as
// crisp's own. It is already "reported": the remote process said what it
// had to say on its own streams, so crisp adds no line of its own.
type remoteStatus struct{ code int }

func (e remoteStatus) Error() string {
	return fmt.Sprintf("remote command exited with status %d", e.code)
}

// ExitStatus is the remote exit code.
func (e remoteStatus) ExitStatus() int { return e.code }

// Is makes the status "already reported": Main prints no line for it.
func (e remoteStatus) Is(target error) bool { return target == errReported }

// interruptedStatus is a session ended by SIGINT, SIGTERM or SIGHUP: exit
// 128+signal, as a shell reports it.
type interruptedStatus struct {
	code int
	msg  string
	err  error
}

// ExitStatus is 128 + the signal number.
func (e interruptedStatus) ExitStatus() int { return e.code }
func (e interruptedStatus) Error() string   { return e.msg }
func (e interruptedStatus) Unwrap() error   { return e.err }

func newInterrupted(err error) error {
	var sig *tty.SignalError
	if errors.As(err, &sig) {
		return interruptedStatus{code: sig.ExitCode(), msg: sig.Error(), err: err}
	}
	return interruptedStatus{code: exitInterrupted, msg: "interrupted", err: err}
}

// sessionOutcome maps a session's error to crisp's exit policy: remote exit
// codes pass through silently, signals give 128+N, anything else is crisp's
// own failure (125) with the error's one line.
func (d streamDeps) sessionOutcome(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var textOnly *transport.ExitError
	if errors.As(err, &textOnly) {
		// Protocols v1-v3 carry no exit code, only this text: show it, as it
		// is all the user gets (the code is 1 unless the text states one).
		_, _ = fmt.Fprintf(d.Streams.ErrOut, "crisp: remote command failed: %s\n", textOnly.Message) // the error stream is the last resort: a failed write there has nowhere to go
	}
	var coded interface{ ExitStatus() int }
	if errors.As(err, &coded) && !errors.Is(err, tty.ErrInterrupted) {
		d.logf("remote command exited with status %d", coded.ExitStatus())
		return remoteStatus{code: coded.ExitStatus()}
	}
	if errors.Is(err, tty.ErrInterrupted) || ctx.Err() != nil {
		return newInterrupted(err)
	}
	return err
}

// execOptions are `crisp exec`'s flags and arguments.
type execOptions struct {
	Stdin     bool
	TTY       bool
	Sync      bool
	Timeout   time.Duration
	Transport string
	Protocol  string
	TLS       tlsOptions
	Trace     traceOptions    // traceflags.go
	Record    recordOptions   // recordflags.go
	Many      execManyOptions // execmany.go: --label, --pod, --name, --parallel

	many bool

	// ProtocolCache is --protocol-cache (protocache.go).
	ProtocolCache bool

	Container string
	Command   []string

	offers []transport.Offer
	deps   streamDeps
}

func newExecCommand(f *factory) *cobra.Command {
	return execCommand(f, &execOptions{})
}

// execCommand binds o to the command; o.deps, when set (tests), replaces the
// factory's dependencies.
func execCommand(f *factory, o *execOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "exec [-i] [-t] [-s] [--timeout D] [--transport T] [--protocol P] CONTAINER -- CMD [ARG...]",
		Short: "Run a command in a running container",
		Long: `Run a command in a running container, over the best streaming protocol the runtime
speaks (--transport auto: WebSocket v5.channel.k8s.io, then SPDY offering v5..v1, then
WebSocket v4.channel.k8s.io; every fallback makes a fresh Exec call, since streaming URLs
are single use). CONTAINER is a full ID, a unique ID prefix or a unique name.

With -t the local terminal is put in raw mode and restored on every way out; its size is
sent as the stream opens and after every resize. -t without a terminal on stdin warns and
carries on without a TTY. -s runs the command with the ExecSync call instead of streaming
and prints its stdout and stderr to crisp's own, whatever the exit code.

On WebSocket v4.channel.k8s.io (and older) the end of stdin cannot reach the remote process:
with piped stdin crisp fails at once (125) rather than wait forever, and names what to use
instead; with a terminal on stdin it warns when the input ends (auto never picks v4 when
SPDY or v5 is available).

EXIT STATUS
  0-255  the remote command's exit status (passed through)
  125    crisp itself failed: bad flags, runtime unreachable, no such container,
         ambiguous prefix, the streaming server refused every protocol offered
  129-143  crisp was interrupted by a signal (128 + signal number)`,
		Example: `  crisp exec mycontainer -- ls /
  crisp exec -it 3f2a sh
  printf 'a\nb\n' | crisp exec -i web -- wc -l
  crisp exec -s --timeout 5s web -- cat /etc/hostname
  crisp -v exec --transport spdy web -- true
  crisp exec --protocol v4.channel.k8s.io --transport websocket web -- echo hi
  crisp exec --label app=web --parallel 4 -- cat /etc/hostname
  crisp exec -it --record session.cast web sh
  crisp exec --trace-file t.jsonl web -- echo hi && crisp trace t.jsonl`,
		Annotations: map[string]string{passThroughAnnotation: "true"},
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
	fl.BoolVar(&o.ProtocolCache, "protocol-cache", true, protocolCacheUsage)
	o.TLS.AddFlags(fl)
	o.Trace.addFlags(fl)
	o.Trace.closeAfter(cmd)
	o.Record.addFlags(fl)
	o.Record.closeAfter(cmd)
	o.Many.addFlags(fl)
	return cmd
}

// Complete splits CONTAINER from the command; "--" after CONTAINER is
// optional (flag parsing stops at CONTAINER).
func (o *execOptions) Complete(f *factory, cmd *cobra.Command, args []string) error {
	if o.deps.Stream == nil {
		o.deps = newStreamDeps(f)
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
		return usageErrorf("--transport and --protocol choose a streaming protocol; -s uses the ExecSync call, which has none")
	}
	return nil
}

// Validate rejects bad input before any connection is made.
func (o *execOptions) Validate() error {
	if o.many {
		return o.Many.validate(o)
	}
	if o.Container == "" {
		return usageErrorf("exec needs a CONTAINER and a command: crisp exec [flags] CONTAINER -- CMD [ARG...]")
	}
	if len(o.Command) == 0 {
		return usageErrorf("exec needs a command to run in %s: crisp exec [flags] %s -- CMD [ARG...]", o.Container, o.Container)
	}
	if o.Sync && (o.Stdin || o.TTY) {
		return usageErrorf("-s (ExecSync) carries no stdin and no terminal: drop -i/-t, or drop -s to stream")
	}
	if o.Timeout < 0 {
		return usageErrorf("--timeout must not be negative")
	}
	if o.Timeout > 0 && !o.Sync {
		return usageErrorf("--timeout bounds an ExecSync call: use it with -s")
	}
	var err error
	if o.offers, err = parseOffers(o.Transport, o.Protocol); err != nil {
		return err
	}
	return o.TLS.Validate()
}

// parseOffers turns --transport and --protocol into what exec and attach
// offer the runtime; either one wrong is a usage error.
func parseOffers(transportFlag, protocol string) ([]transport.Offer, error) {
	t, err := transport.ParseTransport(transportFlag)
	if err != nil {
		return nil, usageError{err}
	}
	offers, err := transport.ExecOffers(t, protocol)
	if err != nil {
		return nil, usageError{err}
	}
	return offers, nil
}

// Run execs the command and returns its exit status as an error (nil for 0).
func (o *execOptions) Run(ctx context.Context) error {
	if o.many {
		return o.Many.run(ctx, o)
	}
	cli, settings, ctr, err := o.deps.connect(ctx, o.Container)
	if err != nil {
		return err
	}
	defer func() { _ = cli.Close() }() // closing a gRPC connection reports nothing to act on
	if o.Sync {
		return o.runSync(ctx, cli, ctr)
	}
	cfg, err := o.deps.transportConfig(o.TLS, settings)
	if err != nil {
		return err
	}
	cfg.Protocols = protocolCache(o.ProtocolCache, cli)
	defer transport.OneProc()() // procs.go: less CPU per byte streamed
	if err := o.Trace.apply(&cfg); err != nil {
		return err
	}
	withTTY := o.deps.checkTTY(o.Stdin, o.TTY)
	if err := o.Record.start(&o.deps, o.Command); err != nil {
		return err
	}
	req := &runtimeapi.ExecRequest{
		ContainerId: ctr.Id, Cmd: o.Command, Tty: withTTY, Stdin: o.Stdin, Stdout: true, Stderr: !withTTY,
	}
	var stdin io.Reader
	if o.Stdin {
		stdin = o.deps.Streams.In
	}
	_, err = o.deps.session(ctx, "exec", cli.ExecSource("exec", req), o.offers, cfg, stdin, withTTY)
	return o.deps.sessionOutcome(ctx, err)
}

// runSync runs the command with ExecSync: stdout and stderr go to crisp's
// own, whatever the exit code, which is passed through.
func (o *execOptions) runSync(ctx context.Context, cli *client.Client, ctr *runtimeapi.Container) error {
	resp, err := cli.ExecSync(ctx, "exec -s", ctr.Id, o.Command, o.Timeout)
	if err != nil {
		if ctx.Err() != nil {
			return newInterrupted(ctx.Err())
		}
		if notStarted, ok := transport.StartFailure(err.Error()); ok {
			return o.deps.sessionOutcome(ctx, notStarted) // 127 or 126 with the runtime's reason
		}
		var grpcErr interface{ GRPCStatus() *status.Status }
		if errors.As(err, &grpcErr) && grpcErr.GRPCStatus().Code() == codes.DeadlineExceeded && o.Timeout > 0 {
			st := grpcErr.GRPCStatus()
			// The runtime ended the command at --timeout (it answers
			// DeadlineExceeded), or its answer missed --timeout plus the
			// request timeout: either way --timeout is the bound to raise.
			return fmt.Errorf("exec -s: %q did not finish within --timeout %s (raise --timeout to give it longer): %s",
				strings.Join(o.Command, " "), o.Timeout, transport.Shorten(st.Message()))
		}
		return err
	}
	if _, err := o.deps.Streams.Out.Write(resp.Stdout); err != nil {
		return fmt.Errorf("exec -s: writing stdout: %w", err)
	}
	if _, err := o.deps.Streams.ErrOut.Write(resp.Stderr); err != nil {
		return fmt.Errorf("exec -s: writing stderr: %w", err)
	}
	if resp.ExitCode != 0 {
		o.deps.logf("remote command exited with status %d", resp.ExitCode)
		return remoteStatus{code: int(resp.ExitCode)}
	}
	return nil
}
