// Package session runs crisp's interactive streaming sessions, exec's and
// attach's, in the shape of kubectl's StreamOptions: the command holds a
// Deps (its streams, a way to reach the runtime, and the Stream function
// that negotiates and runs a session, which tests replace with a fake);
// Session runs a stream inside the terminal's guard (raw mode restored on
// every way out, signals handled, the size sent and resent); Outcome maps
// the session's end to crisp's exit policy. It writes only to the streams
// it is given and never exits.
package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/moby/term"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/base/termsafe"
	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/transport/remotecommand"
	"github.com/crisp-cri/crisp/internal/tty"
)

// StreamFunc negotiates and runs one session (remotecommand.Stream).
type StreamFunc func(ctx context.Context, op string, src transport.URLSource, offers []transport.Offer, cfg transport.Config, s remotecommand.Streams) (remotecommand.Result, error)

// Deps are what exec and attach need from the world; tests replace them
// with fakes.
type Deps struct {
	Streams cmdutil.IOStreams
	// Settings resolves the endpoint and the config file (for TLS keys).
	Settings func() (client.Settings, error)
	// Dial connects to the runtime.
	Dial func(client.Settings) (*client.Client, error)
	// Stream negotiates and runs a session (remotecommand.Stream).
	Stream StreamFunc
	// Verbose is the -v count.
	Verbose int
	// keysAsTyped: a session with input from a terminal and no remote TTY
	// takes the keys as typed (tty.Terminal.KeysAsTyped), for attach's
	// detach keys.
	keysAsTyped bool
}

// NewDeps takes the factory's streams, settings, client constructor and
// -v, with the real streamer.
func NewDeps(f *cmdutil.Factory) Deps {
	return Deps{Streams: f.Streams, Settings: f.Settings, Dial: f.Dialer(), Stream: remotecommand.Stream, Verbose: f.Global.Verbose}
}

// ParseOffers turns --transport and --protocol into what exec and attach
// offer the runtime; either one wrong is a usage error.
func ParseOffers(transportFlag, protocol string) ([]transport.Offer, error) {
	t, err := transport.ParseTransport(transportFlag)
	if err != nil {
		return nil, cmdutil.UsageError{Err: err}
	}
	offers, err := transport.ExecOffers(t, protocol)
	if err != nil {
		return nil, cmdutil.UsageError{Err: err}
	}
	return offers, nil
}

// Connect resolves the endpoint, dials it and finds the container; the
// caller closes the client.
func (d Deps) Connect(ctx context.Context, ref string) (*client.Client, client.Settings, *runtimeapi.Container, error) {
	cli, settings, err := d.dial()
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

// Running is what ConnectRunning found: a running container, the client
// that found it (the caller closes it) and the endpoint's settings.
type Running struct {
	Cli       *client.Client
	Settings  client.Settings
	Container *runtimeapi.Container
}

// PID is the container's process ID on the node (client.ContainerPID).
func (r Running) PID(ctx context.Context) (int, error) {
	return r.Cli.ContainerPID(ctx, r.Container.Id)
}

// ConnectRunning is Connect for a verb that needs the container running:
// any other state is an error that names the container, its state and why
// verb needs it running (noun is how verb calls it: "container", "target").
func (d Deps) ConnectRunning(ctx context.Context, verb, noun, why, ref string) (Running, error) {
	cli, settings, ctr, err := d.Connect(ctx, ref)
	if err != nil {
		return Running{}, err
	}
	if ctr.State != runtimeapi.ContainerState_CONTAINER_RUNNING {
		_ = cli.Close() // closing a gRPC connection reports nothing to act on
		return Running{}, fmt.Errorf("%s: %s %s (%s) is %s, not running; %s (see `crisp ps -a`)",
			verb, noun, client.ShortID(ctr.Id), ctr.GetMetadata().GetName(), client.ContainerStateName(ctr.State), why)
	}
	return Running{Cli: cli, Settings: settings, Container: ctr}, nil
}

// dial resolves the endpoint and dials it; the caller closes the client.
func (d Deps) dial() (*client.Client, client.Settings, error) {
	settings, err := d.Settings()
	if err != nil {
		return nil, settings, err
	}
	cli, err := d.Dial(settings)
	return cli, settings, err
}

// Logf prints a diagnostic line with -v.
func (d Deps) Logf(format string, args ...any) {
	if d.Verbose >= 1 {
		say(d.Streams.ErrOut, "crisp: "+format, args...)
	}
}

// say writes one of crisp's own lines to w (the error stream). The line
// quotes what runtimes, streaming servers and containers said and named:
// it is escaped (termsafe.Text) so that none of it drives the terminal.
func say(w io.Writer, format string, args ...any) {
	_, _ = io.WriteString(w, termsafe.Text(fmt.Sprintf(format, args...))+"\n") // the error stream is the last resort: a failed write there has nowhere to go
}

// TransportConfig is the transport configuration for -v, -vv and TLS.
func (d Deps) TransportConfig(tlsFlags cmdutil.TLSFlags, settings client.Settings) (transport.Config, error) {
	tlsCfg, err := tlsFlags.Config(settings.File, d.Streams.ErrOut)
	if err != nil {
		return transport.Config{}, err
	}
	// A streaming server that takes the connection and never answers gets
	// as long as a gRPC call would.
	return transport.NewConfig(transport.ConfigOptions{
		TLS: tlsCfg, UpgradeTimeout: settings.RequestTimeout, Verbose: d.Verbose, Warnings: true,
		Out: termsafe.Writer{W: d.Streams.ErrOut}, // -v lines and warnings quote the streaming server
	}), nil
}

// Terminal describes the local terminal, honouring the streams'
// IsTerminalIn override (tests).
func (d Deps) Terminal(withIn bool) tty.Terminal {
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

// CheckTTY applies "-t without a terminal on stdin warns and carries on
// without a TTY" (kubectl's behaviour, not crictl's error). Without -i the
// TTY needs no input terminal: only its output formatting changes.
func (d Deps) CheckTTY(stdin, wantTTY bool) bool {
	if !wantTTY || !stdin {
		return wantTTY
	}
	if d.Terminal(true).IsTerminalIn() {
		return true
	}
	_, _ = fmt.Fprintf(d.Streams.ErrOut, "crisp: warning: %s\n", tty.NoTTYWarning) // the error stream is the last resort: a failed write there has nowhere to go
	return false
}

// Session runs a stream inside the terminal's guard: raw mode (with -t and
// -i on a terminal) restored on every way out, SIGINT/SIGTERM/SIGHUP
// handled, and the terminal size sent from the first moment and after every
// SIGWINCH. stdin is the session's input (attach wraps it to watch for the
// detach keys), or nil for none.
func (d Deps) Session(ctx context.Context, op string, src transport.URLSource, offers []transport.Offer, cfg transport.Config, stdin io.Reader, withTTY bool) (remotecommand.Result, error) {
	return d.session(ctx, op, src, offers, cfg, stdin, withTTY, nil)
}

// session is Session; a non-nil errTail keeps the end of what the remote
// side wrote to the stream its errors reach (stderr, stdout with a TTY).
func (d Deps) session(ctx context.Context, op string, src transport.URLSource, offers []transport.Offer, cfg transport.Config, stdin io.Reader, withTTY bool, errTail *tailWriter) (remotecommand.Result, error) {
	t := d.Terminal(stdin != nil && (withTTY || d.keysAsTyped))
	t.KeysAsTyped = !withTTY
	var res remotecommand.Result
	err := t.Safe(ctx, func(ctx context.Context) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel() // ends the size queue so client-go's resize goroutine returns
		s := remotecommand.Streams{Stdin: stdin, Stdout: d.Streams.Out, TTY: withTTY,
			InteractiveStdin: stdin != nil && d.Terminal(true).IsTerminalIn()}
		if !withTTY {
			s.Stderr = d.Streams.ErrOut // a TTY merges stderr into stdout
		} else if q := t.MonitorSize(ctx); q != nil {
			s.Resize = sizeQueue{q}
		}
		if errTail != nil {
			if withTTY {
				errTail.w, s.Stdout = s.Stdout, errTail
			} else {
				errTail.w, s.Stderr = s.Stderr, errTail
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

// Outcome maps a session's error to crisp's exit policy: remote exit codes
// pass through silently, signals give 128+N, anything else is crisp's own
// failure (125) with the error's one line.
func (d Deps) Outcome(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var textOnly *transport.ExitError
	if errors.As(err, &textOnly) {
		// Protocols v1-v3 carry no exit code, only this text: show it, as it
		// is all the user gets (the code is 1 unless the text states one).
		say(d.Streams.ErrOut, "crisp: remote command failed: %s", textOnly.Message)
	}
	var coded transport.RemoteExit
	if errors.As(err, &coded) && !errors.Is(err, tty.ErrInterrupted) {
		d.Logf("remote command exited with status %d", coded.ExitStatus())
		return cmdutil.RemoteStatus{Code: coded.ExitStatus()}
	}
	if errors.Is(err, tty.ErrInterrupted) || ctx.Err() != nil {
		return cmdutil.NewInterrupted(err)
	}
	return err
}

// ExecSync runs cmd in the container with the ExecSync call: its stdout and
// stderr go to the streams whatever the exit code, which passes through as
// a RemoteStatus.
func (d Deps) ExecSync(ctx context.Context, cli *client.Client, id string, cmd []string, timeout time.Duration) error {
	resp, err := cli.ExecSync(ctx, "exec -s", id, cmd, timeout)
	if err != nil {
		if ctx.Err() != nil {
			return cmdutil.NewInterrupted(ctx.Err())
		}
		if notStarted, ok := transport.StartFailure(err.Error()); ok {
			return d.Outcome(ctx, notStarted) // 127 or 126 with the runtime's reason
		}
		var grpcErr interface{ GRPCStatus() *status.Status }
		if errors.As(err, &grpcErr) && grpcErr.GRPCStatus().Code() == codes.DeadlineExceeded && timeout > 0 {
			// The runtime ended the command at --timeout (it answers
			// DeadlineExceeded), or its answer missed --timeout plus the
			// request timeout: either way --timeout is the bound to raise.
			return fmt.Errorf("exec -s: %q did not finish within --timeout %s (raise --timeout to give it longer): %s",
				strings.Join(cmd, " "), timeout, transport.Shorten(grpcErr.GRPCStatus().Message()))
		}
		return err
	}
	if _, err := d.Streams.Out.Write(resp.Stdout); err != nil {
		return fmt.Errorf("exec -s: writing stdout: %w", err)
	}
	if _, err := d.Streams.ErrOut.Write(resp.Stderr); err != nil {
		return fmt.Errorf("exec -s: writing stderr: %w", err)
	}
	if notStarted, ok := transport.ExecFailure(int(resp.ExitCode), tailOf(resp.Stderr)); ok {
		return d.Outcome(ctx, notStarted) // CRI-O's 255 from runc: 127 or 126 as on containerd
	}
	if resp.ExitCode != 0 {
		d.Logf("remote command exited with status %d", resp.ExitCode)
		return cmdutil.RemoteStatus{Code: int(resp.ExitCode)}
	}
	return nil
}

// WaitExit passes a container's exit code through once its process has
// ended (an attach stream ends when it does). A container still running
// after wait ended the stream by other means: nil (exit 0).
func (d Deps) WaitExit(ctx context.Context, cli *client.Client, id string, wait time.Duration) error {
	code, err := cli.WaitForExit(ctx, id, wait)
	return d.exitOutcome(ctx, id, code, err)
}

// exitOutcome is what attach returns for WaitForExit's answer.
func (d Deps) exitOutcome(ctx context.Context, id string, code int32, err error) error {
	switch {
	case errors.Is(err, client.ErrStillRunning):
		return nil
	case err != nil && ctx.Err() != nil:
		return cmdutil.NewInterrupted(err)
	case err != nil:
		d.Logf("attach ended; the container's status is unknown: %v", err)
		return nil
	case code != 0:
		d.Logf("container %s exited with status %d", client.ShortID(id), code)
		return cmdutil.RemoteStatus{Code: int(code) & 0xff}
	}
	return nil
}
