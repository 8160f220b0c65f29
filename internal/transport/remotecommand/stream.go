package remotecommand

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	clientremotecommand "k8s.io/client-go/tools/remotecommand"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/crisp-cri/crisp/internal/base/tracefile"
	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/transport/spdyconn"
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
	// fence: once the session returns, its callbacks leave the caller's
	// writers alone (guard.go).
	fence *fence

	// interactive and failFast decide the stdin-EOF guard (guard.go).
	interactive, failFast bool
	// out and errOut catch local write errors (guard.go).
	out, errOut *localWriter

	mu       sync.Mutex
	accepted transport.Attempt
	// acceptedSpec is the accepted protocol's catalogue entry (attempt.go).
	acceptedSpec protocolSpec
	fatal        error              // ends the attempt although it was accepted
	cancelRun    context.CancelFunc // ends the running attempt
	timing       timing             // timing.go
}

func newSession(op string, cfg transport.Config, s Streams) *session {
	sess := &session{op: op, cfg: cfg, s: s, start: time.Now(), done: make(chan struct{}), fence: &fence{}, interactive: s.InteractiveStdin}
	sess.timing.begin = sess.start
	tr := newSessionTracer(cfg, op, sess.start) // tracefile.go
	sess.tr = tr
	sess.s = Streams{TTY: s.TTY}
	if s.Stdin != nil {
		sess.stdin = &stdinReader{r: s.Stdin, sess: sess, holdOpen: s.TTY}
		sess.s.Stdin = sess.stdin
	}
	if s.Stdout != nil {
		sess.out = &localWriter{w: tr.writer(s.Stdout, "stdout", 1), name: "stdout", onErr: sess.abortRun, fence: sess.fence}
		sess.s.Stdout = sess.out
	}
	if s.Stderr != nil && !s.TTY {
		sess.errOut = &localWriter{w: tr.writer(s.Stderr, "stderr", 2), name: "stderr", onErr: sess.abortRun, fence: sess.fence}
		sess.s.Stderr = sess.errOut
	}
	if s.TTY && s.Resize != nil {
		sess.s.Resize = tr.sizes(s.Resize, sess.fence)
	}
	return sess
}

// end: the session returns; its callbacks touch the caller's writers no more.
func (s *session) end() {
	s.fence.close()
	close(s.done)
}

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

// negotiated is the accepted attempt and its protocol's catalogue entry.
func (s *session) negotiated() (transport.Attempt, protocolSpec) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted, s.acceptedSpec
}

func (s *session) negotiatedSpec() protocolSpec {
	_, spec := s.negotiated()
	return spec
}

// outcome turns what client-go returned after an upgrade into crisp's
// error: nil, the remote exit status, or a failure naming the session.
func (s *session) outcome(ctx context.Context, att transport.Attempt, spec protocolSpec, err error) error {
	if err == nil {
		s.traceExit(0)
		return nil
	}
	if re := remoteExit(spec, err); re != nil {
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

// deadlinePassed reports whether ctx's deadline is behind us: gorilla
// turns the deadline into the connection's, so its read can fail with an
// i/o timeout a moment before the context says it is done.
func deadlinePassed(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}
