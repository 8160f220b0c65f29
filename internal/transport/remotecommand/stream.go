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

	"github.com/crisp-cri/crisp/internal/transport"
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
	defer sess.end()
	defer sess.logTiming(&res) // timing.go: -v's breakdown
	asked := offers
	offers, reordered := cfg.Protocols.Order(ctx, op, asked, cfg) // protocache.go
	defer func() { cfg.Protocols.Remember(ctx, op, asked, res.Attempts, reordered, cfg) }()
	for i, offer := range offers {
		rpcStart := time.Now()
		rawURL, err := src(ctx)
		if err != nil {
			return res, err
		}
		rpc := time.Since(rpcStart)
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

	mu       sync.Mutex
	accepted transport.Attempt
	timing   timing
}

func newSession(op string, cfg transport.Config, s Streams) *session {
	sess := &session{op: op, cfg: cfg, s: s, start: time.Now(), done: make(chan struct{})}
	sess.timing.begin = sess.start
	tr := newTracer(cfg.Trace, sess.start)
	sess.tr = tr
	sess.s = Streams{TTY: s.TTY}
	if s.Stdin != nil {
		sess.stdin = &stdinReader{r: s.Stdin, sess: sess, holdOpen: s.TTY}
		sess.s.Stdin = sess.stdin
	}
	if s.Stdout != nil {
		sess.s.Stdout = newFrameWriter(tr.writer(s.Stdout, "stdout", 1)) // framecopy.go
	}
	if s.Stderr != nil && !s.TTY {
		sess.s.Stderr = newFrameWriter(tr.writer(s.Stderr, "stderr", 2))
	}
	if s.TTY && s.Resize != nil {
		sess.s.Resize = tr.sizes(s.Resize)
	}
	return sess
}

func (s *session) end() { close(s.done) }

func (s *session) negotiated() transport.Attempt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// run makes one attempt on rawURL and, when accepted, streams the session.
func (s *session) run(ctx context.Context, rawURL string, offer transport.Offer) (transport.Attempt, error) {
	att := transport.Attempt{Offer: offer, URL: rawURL}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		att.Err = fmt.Errorf("%s: the runtime returned a streaming URL crisp cannot use: %q (want http:// or https://)", s.op, rawURL)
		return att, att.Err
	}
	rec := &recorder{offer: offer, url: rawURL}
	cfg, tw := transport.WatchTLS(s.cfg, rawURL)
	rec.onAccept = func(status int, protocol string, upgrade time.Duration) {
		att.Status, att.Protocol, att.Upgrade, att.TLS = status, protocol, upgrade, tw.Result()
		s.mu.Lock()
		s.accepted, s.timing.accepted = att, time.Now()
		s.mu.Unlock()
		s.cfg.Log("%s: negotiated %s %s at %s (HTTP %d, upgrade %s)", s.op, offer.Transport.Title(), protocol, rawURL, status, upgrade.Round(time.Microsecond))
		transport.ReportTLS(s.cfg, s.op, rawURL, att.TLS)
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
		att.Err = fmt.Errorf("%s: setting up %s for %s: %w", s.op, offer, rawURL, err)
		return att, att.Err
	}
	// A server that takes the connection but never answers the upgrade
	// would hold crisp forever: bound the handshake, not the session.
	attemptCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if s.cfg.UpgradeTimeout > 0 {
		timer := time.AfterFunc(s.cfg.UpgradeTimeout, func() {
			if rec.timeOut() {
				cancel()
			}
		})
		defer timer.Stop()
	}
	defer rec.final.release() // statuswatch.go: a held v1 connection closes here
	err = exec.StreamWithContext(attemptCtx, opts)
	if rec.accepted() {
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
		err = fmt.Errorf("%s: %s at %s ended without an upgrade", s.op, offer, rawURL)
	}
	att.Status, att.Reason, att.Upgrade = rec.status, rec.reason, rec.upgrade
	var refused *transport.RefusedError
	switch {
	case errors.As(err, &refused):
		att.Err = refused
	case ctx.Err() != nil:
		att.Err = ctx.Err()
	case rec.timedOut():
		att.Err = fmt.Errorf("%s: the runtime's streaming server at %s took the connection but did not answer the %s upgrade within %s; is it overloaded or stuck? (raise --request-timeout to wait longer)",
			s.op, rawURL, offer, s.cfg.UpgradeTimeout)
	default:
		if tlsErr := tw.Describe(err); tlsErr.Error() != err.Error() {
			att.Err = fmt.Errorf("%s: %w", s.op, tlsErr)
			break
		}
		att.Err = fmt.Errorf("%s: connecting to the runtime's streaming server at %s with %s: %w; is the streaming server running and reachable from here?", s.op, rawURL, offer, err)
	}
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
		return ctx.Err()
	}
	return fmt.Errorf("%s: the session over %s %s (%s) broke off: %w; did the runtime or its streaming server stop?",
		s.op, att.Transport.Title(), att.Protocol, att.URL, err)
}

func (s *session) traceExit(code int) {
	if s.tr != nil {
		s.tr.note("<-", "error", 3, fmt.Sprintf("exit status %d", code))
	}
}

func describeRefusal(a transport.Attempt) string {
	var refused *transport.RefusedError
	if errors.As(a.Err, &refused) {
		return refused.Error()
	}
	return fmt.Sprintf("%s at %s failed: %v", a.Offer, a.URL, a.Err)
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
