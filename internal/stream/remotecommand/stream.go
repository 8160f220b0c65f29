package remotecommand

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"time"

	clientremotecommand "k8s.io/client-go/tools/remotecommand"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/crisp-cri/crisp/internal/base/tracefile"
	"github.com/crisp-cri/crisp/internal/stream/spdyconn"
	"github.com/crisp-cri/crisp/internal/stream/transport"
)

// TerminalSizeQueue yields terminal sizes: the first call returns the size at
// the start of the session, later calls block until the next resize; nil
// ends resizing. It is client-go's interface.
type TerminalSizeQueue = clientremotecommand.TerminalSizeQueue

// TerminalSize is a terminal's width and height in cells.
type TerminalSize = clientremotecommand.TerminalSize

// Streams are the local ends of an exec or attach session. Nil streams are
// not requested from the runtime.
type Streams struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer // unused with TTY: the terminal merges it into stdout
	TTY    bool
	// Resize, with TTY, carries the initial size and every later one.
	Resize TerminalSizeQueue
	// InteractiveStdin: Stdin is a terminal a user types into. Without it,
	// Stream refuses to run piped stdin over a protocol that cannot pass
	// its end on (guard.go); with it, it warns when the end is typed.
	InteractiveStdin bool
}

// Result is the outcome of a negotiated session.
type Result struct {
	// Attempts are the negotiation steps in order; the last one is the
	// session's when it was accepted.
	Attempts []transport.Attempt
}

// Negotiated returns the accepted attempt, if any.
func (r Result) Negotiated() (transport.Attempt, bool) {
	if n := len(r.Attempts); n > 0 && r.Attempts[n-1].Accepted() {
		return r.Attempts[n-1], true
	}
	return transport.Attempt{}, false
}

// Stream runs one exec or attach session: for each offer in turn it gets a
// fresh URL from src (streaming URLs are single use, even after a refused
// upgrade), offers the protocols, and falls back to the next offer only when
// the server refuses the upgrade. op ("exec", "attach") names the session in
// messages. The error is the remote process's exit status (an error with
// ExitStatus() int), a *NegotiationError when every offer was refused, or
// crisp's own failure.
func Stream(ctx context.Context, op string, src transport.URLSource, offers []transport.Offer, cfg transport.Config, s Streams) (Result, error) {
	var res Result
	if len(offers) == 0 {
		return res, fmt.Errorf("%s: nothing to offer the streaming server", op)
	}
	sess := newSession(op, cfg, s)
	// attach's stdin feeds a process that was running before and goes on
	// after: its end is no command's end of input (detach keys end the
	// session), so only exec fails fast on it (guard.go).
	sess.failFast = op != "attach"
	defer sess.end()
	defer sess.logTiming(&res) // timing.go: -v's breakdown
	asked := offers
	// The protocol cache may ask the runtime's Version before it orders the
	// offers; the first URL call does not depend on the order, so it runs
	// meanwhile (one RPC's latency off every exec and attach).
	next := func() (string, time.Duration, error) { return fetchURL(ctx, src) }
	first := next
	if cfg.Protocols.Consulted(asked) {
		first = fetchURLAsync(ctx, src)
	}
	offers, reordered := cfg.Protocols.Order(ctx, op, asked, cfg) // protocache.go
	defer func() { cfg.Protocols.Remember(ctx, op, asked, res.Attempts, reordered, cfg) }()
	for i, offer := range offers {
		fetch := next
		if i == 0 {
			fetch = first
		}
		rawURL, rpc, err := fetch()
		if err != nil {
			return res, err
		}
		sess.tr.fileTrace().SetRPC(rpc) // tracefile.go: the handshake event carries it
		att, err := sess.run(ctx, rawURL, offer)
		att.RPC = rpc
		res.Attempts = append(res.Attempts, att)
		if att.Accepted() {
			return res, err
		}
		if !httpstream.IsUpgradeFailure(att.Err) {
			return res, att.Err
		}
		if i+1 < len(offers) {
			cfg.Log("%s: %s; falling back to %s with a fresh URL", op, describeRefusal(att), offers[i+1])
		}
	}
	return res, &transport.NegotiationError{Op: op, Attempts: res.Attempts}
}

// fetchURL makes one URL call and times it.
func fetchURL(ctx context.Context, src transport.URLSource) (string, time.Duration, error) {
	start := time.Now()
	rawURL, err := src(ctx)
	return rawURL, time.Since(start), err
}

// fetchURLAsync starts fetchURL at once and returns what waits for its
// answer; the caller must call it (the call's goroutine ends with the call).
func fetchURLAsync(ctx context.Context, src transport.URLSource) func() (string, time.Duration, error) {
	type answer struct {
		url string
		rpc time.Duration
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		var a answer
		a.url, a.rpc, a.err = fetchURL(ctx, src)
		ch <- a
	}()
	return func() (string, time.Duration, error) {
		a := <-ch
		return a.url, a.rpc, a.err
	}
}

// Try offers exactly one offer on one URL and, if the server accepts,
// streams the session: the building block for probes that test each
// transport and subprotocol alone. The Attempt says what the server answered;
// the error is the session's outcome (as Stream's) or the refusal.
func Try(ctx context.Context, op string, rawURL string, offer transport.Offer, cfg transport.Config, s Streams) (transport.Attempt, error) {
	sess := newSession(op, cfg, s)
	defer sess.end()
	att, err := sess.run(ctx, rawURL, offer)
	if !att.Accepted() {
		return att, att.Err
	}
	return att, err
}

// session holds the local streams across attempts. The stdin wrapper is
// shared so a fallback never loses input, and knows the negotiated protocol
// for its end-of-input decision.
type session struct {
	op    string
	cfg   transport.Config
	s     Streams
	start time.Time
	tr    *tracer
	done  chan struct{}
	stdin *stdinReader

	// interactive and failFast decide the stdin-EOF guard (guard.go).
	interactive, failFast bool
	// out and errOut catch local write errors (guard.go).
	out, errOut *localWriter

	mu        sync.Mutex
	accepted  transport.Attempt
	fatal     error              // ends the attempt although it was accepted
	cancelRun context.CancelFunc // ends the running attempt
	timing    timing             // timing.go
}

func newSession(op string, cfg transport.Config, s Streams) *session {
	sess := &session{op: op, cfg: cfg, s: s, start: time.Now(), done: make(chan struct{}), interactive: s.InteractiveStdin}
	sess.timing.begin = sess.start
	tr := newSessionTracer(cfg, op, sess.start) // tracefile.go
	sess.tr = tr
	sess.s = Streams{TTY: s.TTY}
	if s.Stdin != nil {
		sess.stdin = &stdinReader{r: s.Stdin, sess: sess, holdOpen: s.TTY}
		sess.s.Stdin = sess.stdin
	}
	if s.Stdout != nil {
		sess.out = &localWriter{w: tr.writer(s.Stdout, "stdout", 1), name: "stdout", onErr: sess.abortRun}
		sess.s.Stdout = sess.out
	}
	if s.Stderr != nil && !s.TTY {
		sess.errOut = &localWriter{w: tr.writer(s.Stderr, "stderr", 2), name: "stderr", onErr: sess.abortRun}
		sess.s.Stderr = sess.errOut
	}
	if s.TTY && s.Resize != nil {
		sess.s.Resize = tr.sizes(s.Resize)
	}
	return sess
}

func (s *session) end() { close(s.done) }

// abortRun ends the running attempt (a guard in guard.go tripped).
func (s *session) abortRun() {
	s.mu.Lock()
	cancel := s.cancelRun
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// failure is what ends an accepted attempt besides its own outcome: a
// guard's error, or a local write that failed.
func (s *session) failure() error {
	s.mu.Lock()
	fatal := s.fatal
	s.mu.Unlock()
	if fatal != nil {
		return fatal
	}
	for _, w := range []*localWriter{s.out, s.errOut} {
		if err := w.failed(); err != nil {
			return fmt.Errorf("%s: %w", s.op, err)
		}
	}
	return nil
}

func (s *session) negotiated() transport.Attempt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// run makes one attempt on rawURL and, when accepted, streams the session.
func (s *session) run(ctx context.Context, rawURL string, offer transport.Offer) (transport.Attempt, error) {
	att := transport.Attempt{Offer: offer, URL: rawURL}
	shown := transport.Shorten(rawURL) // what messages show of the URL
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		att.Err = fmt.Errorf("%s: the runtime returned a streaming URL crisp cannot use: %q (want http:// or https://)", s.op, transport.Shorten(rawURL))
		return att, att.Err
	}
	rec := &recorder{offer: offer, url: rawURL}
	cfg, tw := transport.WatchTLS(s.cfg, rawURL)
	// A server that takes the connection but never answers the upgrade
	// would hold crisp forever: bound the handshake, not the session.
	attemptCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.cancelRun = cancel
	s.mu.Unlock()
	rec.onAccept = func(status int, protocol string, upgrade time.Duration) error {
		att.Status, att.Protocol, att.Upgrade, att.TLS = status, protocol, upgrade, tw.Result()
		s.mu.Lock()
		s.accepted, s.timing.accepted = att, time.Now()
		if s.needsStdinEOF(offer.Transport, protocol) {
			s.fatal = stdinEOFError(s.op, offer, protocol)
		}
		fatal := s.fatal
		s.mu.Unlock()
		s.tr.fileTrace().Handshake(att)
		s.cfg.Log("%s: negotiated %s %s at %s (HTTP %d, upgrade %s)", s.op, offer.Transport.Title(), protocol, shown, status, upgrade.Round(time.Microsecond))
		transport.ReportTLS(s.cfg, s.op, shown, att.TLS)
		return fatal
	}
	opts := clientremotecommand.StreamOptions{
		Stdin: s.s.Stdin, Stdout: s.s.Stdout, Stderr: s.s.Stderr, Tty: s.s.TTY, TerminalSizeQueue: s.s.Resize,
	}
	var exec clientremotecommand.Executor
	switch offer.Transport {
	case transport.SPDY:
		exec, err = newSPDYExecutor(cfg, u, offer.Protocols, rec)
	case transport.WebSocket:
		if base64Offer(offer) {
			exec, err = newBase64Executor(cfg, rawURL, offer.Protocols, rec)
			break
		}
		exec, err = newWebSocketExecutor(cfg, rawURL, offer.Protocols, rec)
	default:
		err = fmt.Errorf("unknown transport %q", offer.Transport)
	}
	if err != nil {
		att.Err = fmt.Errorf("%s: setting up %s for %s: %w", s.op, offer, shown, err)
		return att, att.Err
	}
	stopAbort := context.AfterFunc(ctx, rec.abort)
	defer stopAbort()
	if s.cfg.UpgradeTimeout > 0 {
		timer := time.AfterFunc(s.cfg.UpgradeTimeout, func() {
			if rec.timeOut() {
				cancel()
			}
		})
		defer timer.Stop()
	}
	defer rec.final.release() // statuswatch.go: a held v1 connection closes here
	s.tr.line("%s: offering %s at %s", s.op, offer, shown)
	err = exec.StreamWithContext(attemptCtx, opts)
	if rec.accepted() {
		if ferr := s.failure(); ferr != nil && ctx.Err() == nil {
			return att, ferr
		}
		if att.Protocol == "" {
			// SPDY servers may answer without a version header: client-go then
			// speaks v1, and so do we in messages.
			att.Protocol = transport.ExecProtocolV1
		}
		if err == nil && ctx.Err() == nil {
			// v1: client-go returned when stdout and stderr ended; the
			// server's error text follows them (statuswatch.go).
			text, readErr := rec.final.awaitText(ctx)
			switch {
			case strings.TrimSpace(text) != "":
				err = fmt.Errorf("error executing remote command: %s", text)
			case readErr != nil:
				err = fmt.Errorf("reading the error stream: %w", readErr)
			}
		}
		if err == nil && offer.Transport == transport.SPDY && statusCarryingProtocol(att.Protocol) && !rec.final.seen.Load() && ctx.Err() == nil {
			err = fmt.Errorf("the connection ended without the command's exit status: the runtime dropped the stream, so output may be incomplete")
		}
		return att, s.outcome(ctx, att, err)
	}
	if err == nil {
		err = fmt.Errorf("%s: %s at %s ended without an upgrade", s.op, offer, shown)
	}
	err = transport.ShortenIn(err, rawURL)
	att.Status, att.Reason, att.Upgrade = rec.status, rec.reason, rec.upgrade
	var refused *transport.RefusedError
	switch {
	case errors.As(err, &refused):
		att.Err = refused
	case rec.timedOut():
		att.Err = &transport.UpgradeTimeoutError{Op: s.op, Offer: offer, URL: rawURL, After: s.cfg.UpgradeTimeout, Hint: "raise --request-timeout to wait longer"}
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || deadlinePassed(ctx):
		// The caller's own deadline (probe's --attempt-timeout) came first.
		att.Err = &transport.UpgradeTimeoutError{Op: s.op, Offer: offer, URL: rawURL, After: time.Since(s.start)}
	case ctx.Err() != nil:
		att.Err = ctx.Err()
	default:
		if tlsErr := tw.Describe(err); tlsErr.Error() != err.Error() {
			att.Err = fmt.Errorf("%s: %w", s.op, tlsErr)
			break
		}
		att.Err = fmt.Errorf("%s: connecting to the runtime's streaming server at %s with %s: %w; is the streaming server running and reachable from here?", s.op, shown, offer, err)
	}
	s.tr.fileTrace().Handshake(att)
	return att, att.Err
}

// outcome turns what client-go returned after an upgrade into crisp's
// error: nil, the remote exit status, or a failure naming the session.
func (s *session) outcome(ctx context.Context, att transport.Attempt, err error) error {
	if err == nil {
		s.traceExit(0)
		return nil
	}
	if re := remoteExit(transport.Protocol{Transport: att.Transport, Name: att.Protocol}, err); re != nil {
		s.traceExit(re.ExitStatus())
		return re
	}
	if ctx.Err() != nil {
		s.tr.fileTrace().Close("local", tracefile.StreamClose)
		return ctx.Err()
	}
	s.tr.fileTrace().Close("remote", tracefile.StreamClose)
	switch {
	case errors.Is(err, spdyconn.ErrUnknownKind):
		return fmt.Errorf("%s: %w", s.op, err)
	case errors.Is(err, spdyconn.ErrCreateTimeout):
		return fmt.Errorf("%s: the streaming server at %s upgraded to SPDY %s but did not accept the session's streams in time (%w); is it overloaded or stuck? raise --request-timeout to wait longer",
			s.op, transport.Shorten(att.URL), att.Protocol, err)
	case errors.Is(err, ErrNoStatus), errors.Is(err, errStatusTooLong):
		return fmt.Errorf("%s over %s %s: %w", s.op, att.Transport.Title(), att.Protocol, err)
	}
	return fmt.Errorf("%s: the session over %s %s (%s) broke off: %w; did the runtime or its streaming server stop?",
		s.op, att.Transport.Title(), att.Protocol, transport.Shorten(att.URL), err)
}

func (s *session) traceExit(code int) {
	if s.tr != nil {
		s.tr.note("<-", "error", 3, fmt.Sprintf("exit status %d", code))
		s.tr.fileTrace().Exit(code)
		s.tr.fileTrace().Close("remote", tracefile.StreamClose)
	}
}

func describeRefusal(a transport.Attempt) string {
	var refused *transport.RefusedError
	if errors.As(a.Err, &refused) {
		return refused.Error()
	}
	return fmt.Sprintf("%s at %s failed: %v", a.Offer, transport.Shorten(a.URL), a.Err)
}

// base64Offer reports whether offer's first protocol is a base64 framing,
// which crisp's own executor speaks (client-go's reads binary frames only).
func base64Offer(offer transport.Offer) bool {
	if len(offer.Protocols) == 0 {
		return false
	}
	spec, _ := transport.Lookup(transport.CallExec, transport.Protocol{Transport: offer.Transport, Name: offer.Protocols[0]})
	return spec.Framing == transport.FramingBase64
}

// deadlinePassed reports whether ctx's deadline is behind us: gorilla
// turns the deadline into the connection's, so its read can fail with an
// i/o timeout a moment before the context says it is done.
func deadlinePassed(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}
