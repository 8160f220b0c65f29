package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/crisp-cri/crisp/internal/tracefile"
)

// Offer is one negotiation step: one connection on one transport offering
// protocols in preference order.
type Offer struct {
	Transport Transport // SPDY or WebSocket, never Auto
	Protocols []string
}

// String names the offer the way messages show it: "WebSocket
// v5.channel.k8s.io", "SPDY v5..v1".
func (o Offer) String() string {
	name := transportName(o.Transport)
	if len(o.Protocols) == len(ExecProtocols) && o.Protocols[0] == ExecProtocolV5 && o.Protocols[4] == ExecProtocolV1 {
		return name + " v5..v1"
	}
	return name + " " + strings.Join(o.Protocols, ",")
}

// TerminalSizeQueue yields terminal sizes: the first call returns the size at
// the start of the session, later calls block until the next resize; nil
// ends resizing. It is client-go's interface.
type TerminalSizeQueue = remotecommand.TerminalSizeQueue

// TerminalSize is a terminal's width and height in cells.
type TerminalSize = remotecommand.TerminalSize

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

// Attempt is what one negotiation step did: the URL it used, what the server
// answered, and how long it took.
type Attempt struct {
	Offer
	URL string
	// Status is the HTTP status of the upgrade response (101 when the
	// upgrade succeeded); 0 when no response arrived.
	Status int
	// Reason is the server's explanation of a refusal (status text and body).
	Reason string
	// Protocol is the negotiated subprotocol; empty unless accepted.
	Protocol string
	// RPC is how long the URL took to get (the Exec/Attach RPC); zero for Try.
	RPC time.Duration
	// Upgrade is the time from dialing to the upgraded connection.
	Upgrade time.Duration
	// TLS is what the TLS handshake showed (version, server certificate);
	// nil for a plaintext URL or when no handshake completed.
	TLS *TLSInfo
	// Err is why the attempt failed; nil when the upgrade succeeded (the
	// session's own outcome is returned separately).
	Err error
}

// Accepted reports whether the server upgraded the connection.
func (a Attempt) Accepted() bool { return a.Err == nil && a.Protocol != "" }

// Result is the outcome of a negotiated session.
type Result struct {
	// Attempts are the negotiation steps in order; the last one is the
	// session's when it was accepted.
	Attempts []Attempt
}

// Negotiated returns the accepted attempt, if any.
func (r Result) Negotiated() (Attempt, bool) {
	if n := len(r.Attempts); n > 0 && r.Attempts[n-1].Accepted() {
		return r.Attempts[n-1], true
	}
	return Attempt{}, false
}

// Stream runs one exec or attach session: for each offer in turn it gets a
// fresh URL from src (streaming URLs are single use, even after a refused
// upgrade), offers the protocols, and falls back to the next offer only when
// the server refuses the upgrade. op ("exec", "attach") names the session in
// messages. The error is the remote process's exit status (an error with
// ExitStatus() int), a *NegotiationError when every offer was refused, or
// crisp's own failure.
func Stream(ctx context.Context, op string, src URLSource, offers []Offer, cfg Config, s Streams) (Result, error) {
	var res Result
	if len(offers) == 0 {
		return res, fmt.Errorf("%s: nothing to offer the streaming server", op)
	}
	sess := newSession(op, cfg, s)
	defer sess.end()
	for i, offer := range offers {
		rpcStart := time.Now()
		rawURL, err := src(ctx)
		if err != nil {
			return res, err
		}
		rpc := time.Since(rpcStart)
		sess.tr.fileTrace().setRPC(rpc) // tracefile.go: the handshake event carries it
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
			cfg.logf("%s: %s; falling back to %s with a fresh URL", op, describeRefusal(att), offers[i+1])
		}
	}
	return res, &NegotiationError{Op: op, Attempts: res.Attempts}
}

// Try offers exactly one offer on one URL and, if the server accepts,
// streams the session: the building block for probes that test each
// transport and subprotocol alone. The Attempt says what the server answered;
// the error is the session's outcome (as Stream's) or the refusal.
func Try(ctx context.Context, op string, rawURL string, offer Offer, cfg Config, s Streams) (Attempt, error) {
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
	cfg   Config
	s     Streams
	start time.Time
	tr    *tracer
	done  chan struct{}
	stdin *stdinReader

	mu       sync.Mutex
	accepted Attempt
}

func newSession(op string, cfg Config, s Streams) *session {
	sess := &session{op: op, cfg: cfg, s: s, start: time.Now(), done: make(chan struct{})}
	tr := newSessionTracer(cfg, op, sess.start) // tracefile.go
	sess.tr = tr
	sess.s = Streams{TTY: s.TTY}
	if s.Stdin != nil {
		sess.stdin = &stdinReader{r: s.Stdin, sess: sess, holdOpen: s.TTY}
		sess.s.Stdin = sess.stdin
	}
	if s.Stdout != nil {
		sess.s.Stdout = tr.writer(s.Stdout, "stdout", 1)
	}
	if s.Stderr != nil && !s.TTY {
		sess.s.Stderr = tr.writer(s.Stderr, "stderr", 2)
	}
	if s.TTY && s.Resize != nil {
		sess.s.Resize = tr.sizes(s.Resize)
	}
	return sess
}

func (s *session) end() { close(s.done) }

func (s *session) negotiated() Attempt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// run makes one attempt on rawURL and, when accepted, streams the session.
func (s *session) run(ctx context.Context, rawURL string, offer Offer) (Attempt, error) {
	att := Attempt{Offer: offer, URL: rawURL}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		att.Err = fmt.Errorf("%s: the runtime returned a streaming URL crisp cannot use: %q (want http:// or https://)", s.op, rawURL)
		return att, att.Err
	}
	rec := &recorder{offer: offer, url: rawURL}
	cfg, tw := watchTLS(s.cfg, rawURL) // tlsinfo.go
	rec.onAccept = func(status int, protocol string, upgrade time.Duration) {
		att.Status, att.Protocol, att.Upgrade, att.TLS = status, protocol, upgrade, tw.result()
		s.mu.Lock()
		s.accepted = att
		s.mu.Unlock()
		s.tr.fileTrace().handshake(att)
		s.cfg.logf("%s: negotiated %s %s at %s (HTTP %d, upgrade %s)", s.op, transportName(offer.Transport), protocol, rawURL, status, upgrade.Round(time.Microsecond))
		reportTLS(s.cfg, s.op, rawURL, att.TLS)
	}
	opts := remotecommand.StreamOptions{
		Stdin: s.s.Stdin, Stdout: s.s.Stdout, Stderr: s.s.Stderr, Tty: s.s.TTY, TerminalSizeQueue: s.s.Resize,
	}
	var exec remotecommand.Executor
	switch offer.Transport {
	case SPDY:
		exec, err = newSPDYExecutor(cfg, u, offer.Protocols, rec)
	case WebSocket:
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
			att.Protocol = ExecProtocolV1
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
		if err == nil && offer.Transport == SPDY && statusCarryingProtocol(att.Protocol) && !rec.final.seen.Load() && ctx.Err() == nil {
			err = fmt.Errorf("the connection ended without the command's exit status: the runtime dropped the stream, so output may be incomplete")
		}
		return att, s.outcome(ctx, att, err)
	}
	if err == nil {
		err = fmt.Errorf("%s: %s at %s ended without an upgrade", s.op, offer, rawURL)
	}
	att.Status, att.Reason, att.Upgrade = rec.status, rec.reason, rec.upgrade
	var refused *RefusedError
	switch {
	case errors.As(err, &refused):
		att.Err = refused
	case ctx.Err() != nil:
		att.Err = ctx.Err()
	case rec.timedOut():
		att.Err = fmt.Errorf("%s: the runtime's streaming server at %s took the connection but did not answer the %s upgrade within %s; is it overloaded or stuck? (raise --request-timeout to wait longer)",
			s.op, rawURL, offer, s.cfg.UpgradeTimeout)
	default:
		if tlsErr := tw.describe(err); tlsErr.Error() != err.Error() {
			att.Err = fmt.Errorf("%s: %w", s.op, tlsErr)
			break
		}
		att.Err = fmt.Errorf("%s: connecting to the runtime's streaming server at %s with %s: %w; is the streaming server running and reachable from here?", s.op, rawURL, offer, err)
	}
	s.tr.fileTrace().handshake(att)
	return att, att.Err
}

// outcome turns what client-go returned after an upgrade into crisp's
// error: nil, the remote exit status, or a failure naming the session.
func (s *session) outcome(ctx context.Context, att Attempt, err error) error {
	if err == nil {
		s.traceExit(0)
		return nil
	}
	if re := remoteExit(att.Protocol, err); re != nil {
		s.traceExit(re.ExitStatus())
		return re
	}
	if ctx.Err() != nil {
		s.tr.fileTrace().close("local", tracefile.StreamClose)
		return ctx.Err()
	}
	s.tr.fileTrace().close("remote", tracefile.StreamClose)
	return fmt.Errorf("%s: the session over %s %s (%s) broke off: %w; did the runtime or its streaming server stop?",
		s.op, transportName(att.Transport), att.Protocol, att.URL, err)
}

func (s *session) traceExit(code int) {
	if s.tr != nil {
		s.tr.note("<-", "error", 3, fmt.Sprintf("exit status %d", code))
		s.tr.fileTrace().exit(code)
		s.tr.fileTrace().close("remote", tracefile.StreamClose)
	}
}

func transportName(t Transport) string {
	switch t {
	case SPDY:
		return "SPDY"
	case WebSocket:
		return "WebSocket"
	}
	return string(t)
}

func describeRefusal(a Attempt) string {
	var refused *RefusedError
	if errors.As(a.Err, &refused) {
		return refused.Error()
	}
	return fmt.Sprintf("%s at %s failed: %v", a.Offer, a.URL, a.Err)
}
