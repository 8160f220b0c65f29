package session

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/base/termsafe"
	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/transport/remotecommand"
	"github.com/crisp-cri/crisp/internal/tty"
)

// Exec is one exec: what to run where, how (-i, -t, -s and its timeout),
// what to offer the runtime, and the streaming flags. `crisp exec` binds its
// flags to these fields (cmd/crisp/exec.go) and checks them before Exec.
type Exec struct {
	Container        string
	Command          []string
	Stdin, TTY, Sync bool
	Timeout          time.Duration
	// Transport and Protocol are --transport and --protocol; Offers is
	// what they give (ParseOffers), set by the command's Validate.
	Transport, Protocol string
	Offers              []transport.Offer
	ProtocolCache       bool // --protocol-cache (protocache.go)
	TLS                 cmdutil.TLSFlags
	Trace               cmdutil.TraceFlags
	Peer                cmdutil.PeerFlags
	Record              RecordFlags
}

// Exec runs e and returns the remote exit status as an error (nil for 0).
// The caller closes e.Trace and e.Record.
func (d Deps) Exec(ctx context.Context, e *Exec) error {
	cli, settings, err := d.dial()
	if err != nil {
		return err
	}
	defer func() { _ = cli.Close() }() // closing a gRPC connection reports nothing to act on
	// A full ID goes to the runtime unresolved (one RPC less); a recording
	// is not started before the container is known to exist.
	unresolved := client.IsFullID(e.Container) && !e.Sync && e.Record.File == ""
	var ctr *runtimeapi.Container
	if !unresolved {
		if ctr, err = cli.ResolveContainer(ctx, e.Container); err != nil {
			return err
		}
	}
	if e.Sync {
		return d.ExecSync(ctx, cli, ctr.Id, e.Command, e.Timeout)
	}
	cfg, err := d.config(e.TLS, settings, protocolCache(e.ProtocolCache, cli), cmdutil.Configure(e.Trace.Apply, e.Peer.Apply))
	if err != nil {
		return err
	}
	defer transport.OneProc()() // less CPU per byte streamed
	withTTY := d.CheckTTY(e.Stdin, e.TTY)
	if err := e.Record.Start(&d, e.Command); err != nil {
		return err
	}
	req := &runtimeapi.ExecRequest{Cmd: e.Command, Tty: withTTY, Stdin: e.Stdin, Stdout: true, Stderr: !withTTY}
	var src transport.URLSource
	if unresolved {
		src = cli.UnresolvedExecSource("exec", e.Container, req)
	} else {
		req.ContainerId = ctr.Id
		src = cli.ExecSource("exec", req)
	}
	var stdin io.Reader
	if e.Stdin {
		stdin = d.Streams.In
	}
	var errTail tailWriter
	_, err = d.session(ctx, "exec", src, e.Offers, cfg, stdin, withTTY, &errTail)
	return d.Outcome(ctx, errTail.startFailure(err))
}

// Attach is one attach: the container, -i, -t and the detach keys, what to
// offer the runtime, the streaming flags, and how long to wait for the
// runtime to record the exit of a container whose stream ended. `crisp
// attach` binds its flags to these fields (cmd/crisp/attach.go) and checks
// them before Attach.
type Attach struct {
	Container  string
	Stdin, TTY bool
	// DetachKeys is --detach-keys; Keys what it gives (tty.ParseDetachKeys),
	// set by the command's Validate.
	DetachKeys string
	Keys       []byte
	// Transport and Protocol are --transport and --protocol; Offers is
	// what they give (ParseOffers), set by the command's Validate.
	Transport, Protocol string
	Offers              []transport.Offer
	ProtocolCache       bool // --protocol-cache (protocache.go)
	TLS                 cmdutil.TLSFlags
	Trace               cmdutil.TraceFlags
	Peer                cmdutil.PeerFlags
	Record              RecordFlags
	Reconnect           ReconnectFlags
	ExitWait            time.Duration
}

// Attach attaches until the process ends (its exit status is returned as
// an error) or the user detaches (nil). The caller closes a.Trace and
// a.Record.
func (d Deps) Attach(ctx context.Context, a *Attach) error {
	run, err := d.ConnectRunning(ctx, "attach", "container", "attach needs a running container", a.Container)
	if err != nil {
		return err
	}
	cli, settings, ctr := run.Cli, run.Settings, run.Container
	defer func() { _ = cli.Close() }() // closing a gRPC connection reports nothing to act on
	cfg, err := d.config(a.TLS, settings, protocolCache(a.ProtocolCache, cli), cmdutil.Configure(a.Trace.Apply, a.Peer.Apply))
	if err != nil {
		return err
	}
	defer transport.OneProc()() // less CPU per byte streamed
	withTTY := d.CheckTTY(a.Stdin, a.TTY)
	if err := a.Record.Start(&d, []string{"attach", a.Container}); err != nil {
		return err
	}
	req := &runtimeapi.AttachRequest{ContainerId: ctr.Id, Stdin: a.Stdin, Tty: withTTY, Stdout: true, Stderr: !withTTY}
	src := cli.AttachSource("attach", req)

	ctx, detach := context.WithCancel(ctx)
	defer detach()
	var stdin io.Reader
	var keys *tty.DetachReader
	var inputEnd eofWatch
	if a.Stdin {
		in := d.Streams.In
		if !withTTY && len(a.Keys) > 0 {
			// A terminal's line buffering and flow control would keep the
			// detach keys from crisp: the session takes keys as typed, and
			// the end-of-file key, then a byte, still ends the input.
			if key, ok := d.Terminal(true).EOFKey(); ok {
				in = tty.NewEOFReader(in, key)
				d.keysAsTyped = true
			}
		}
		keys = tty.NewDetachReader(in, a.Keys, detach)
		defer func() { _ = keys.Close() }() // it only stops watching stdin
		inputEnd.r = keys
		stdin = &inputEnd
	}
	var input *LeasedInput
	if stdin != nil && a.Reconnect.Enabled {
		// A session that broke off must not take what is typed for the next.
		input = NewLeasedInput(stdin)
	}
	session := func(ctx context.Context, src transport.URLSource, upgraded func()) (remotecommand.Result, error) {
		in := stdin
		if input != nil {
			lease := input.Lease()
			defer lease.End()
			in = lease
		}
		cfg := cfg
		cfg.Upgraded = upgraded
		return d.Session(ctx, "attach", src, a.Offers, cfg, in, withTTY)
	}
	inputDone := func() bool { return stdin == nil || inputEnd.ended.Load() }
	err = a.Reconnect.Run(ctx, d, cli, ctr.Id, src, session, keys, a.ExitWait, inputDone)
	if keys != nil && keys.Detached() {
		_ = keys.Close() // it only stops watching stdin
		d.Logf("detached from container %s; it keeps running", client.ShortID(ctr.Id))
		return nil
	}
	if err == nil {
		if inputDone() {
			return d.waitExitAfterInput(ctx, cli, ctr, a.Stdin, a.ExitWait)
		}
		return d.WaitExit(ctx, cli, ctr.Id, a.ExitWait)
	}
	return d.Outcome(ctx, err)
}

// inputEndExitWait is how long attach waits for the container's exit, when
// the stream ended after the client's stdin did (or with no stdin sent),
// before it asks whether the runtime ends attach streams then
// (endsAttachWithInput): if so, the container runs on, and is said to
// within about a second of the stream's end.
const inputEndExitWait = time.Second

// endsAttachWithInput reports whether cli's runtime ends an attach stream
// when the client's stdin ends, and at once when no stdin is sent: CRI-O
// does. containerd's stream lasts until the container exits, which it may
// record more than a second after the stream ended, so there attach waits
// on (ExitWait). A runtime whose name cannot be had is taken not to.
func endsAttachWithInput(ctx context.Context, cli *client.Client) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	v, err := cli.Runtime.Version(ctx, &runtimeapi.VersionRequest{})
	return err == nil && strings.EqualFold(v.GetRuntimeName(), "cri-o")
}

// waitExitAfterInput is WaitExit for a stream that ended once the client
// had no more input to send: on a runtime that ends attach streams then, a
// container still running after inputEndExitWait is said to be, and attach
// exits 0.
func (d Deps) waitExitAfterInput(ctx context.Context, cli *client.Client, ctr *runtimeapi.Container, sentStdin bool, exitWait time.Duration) error {
	first := min(exitWait, inputEndExitWait)
	code, err := cli.WaitForExit(ctx, ctr.Id, first)
	if !errors.Is(err, client.ErrStillRunning) {
		return d.exitOutcome(ctx, ctr.Id, code, err)
	}
	if !endsAttachWithInput(ctx, cli) {
		return d.WaitExit(ctx, cli, ctr.Id, exitWait-first)
	}
	why := "when stdin ended"
	if !sentStdin {
		why = "at once, as no stdin was sent (use -i to send it)"
	}
	// Said without -v: otherwise an exit 0 reads as the container's.
	say(d.Streams.ErrOut, "crisp: attach: the runtime ended the stream %s; container %s (%s) is still running",
		why, client.ShortID(ctr.Id), termsafe.Printable(ctr.GetMetadata().GetName()))
	return nil
}

// eofWatch passes r through and records whether it reached its end.
type eofWatch struct {
	r     io.Reader
	ended atomic.Bool
}

func (e *eofWatch) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if errors.Is(err, io.EOF) {
		e.ended.Store(true)
	}
	return n, err
}

// config is TransportConfig with the protocol cache (nil: none), adjusted
// by configure (--trace-file) when set.
func (d Deps) config(tlsFlags cmdutil.TLSFlags, settings client.Settings, protocols *transport.ProtocolCache, configure func(*transport.Config) error) (transport.Config, error) {
	cfg, err := d.TransportConfig(tlsFlags, settings)
	cfg.Protocols = protocols
	if err == nil && configure != nil {
		err = configure(&cfg)
	}
	return cfg, err
}
