package remotecommand

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	clientremotecommand "k8s.io/client-go/tools/remotecommand"

	"github.com/crisp-cri/crisp/internal/base/tracefile"
	"github.com/crisp-cri/crisp/internal/transport"
)

// One attempt of a session, in the steps session.run takes: check the URL,
// set the attempt up (its recorder and executor), stream within the
// handshake's bounds, then read the outcome of an accepted or a failed
// upgrade.

// protocolSpec is a protocol's catalogue entry, looked up once (when the
// offer is set up, or when the server accepts) and carried from there to
// every decision it drives: the stdin guards, the base64 framing, the
// reading of exit codes. known is false for a name the catalogue lacks.
type protocolSpec struct {
	transport.Spec
	known bool
}

// lookupSpec finds p's exec/attach catalogue entry (for a name the
// catalogue lacks, p itself and nothing more).
func lookupSpec(p transport.Protocol) protocolSpec {
	spec, ok := transport.Lookup(transport.CallExec, p)
	if !ok {
		spec.Protocol = p
	}
	return protocolSpec{spec, ok}
}

// lacksStdinEOF: a known protocol that cannot pass the end of stdin on.
func (p protocolSpec) lacksStdinEOF() bool { return p.known && !p.Caps.StdinEOF }

// exitInText: a known protocol older than v4, whose exit status is only in
// the error text.
func (p protocolSpec) exitInText() bool { return p.known && p.Version < 4 }

// attempt is one offer on one URL: what the server answered (att, filled in
// by the recorder's callbacks) and what the later steps need.
type attempt struct {
	att   transport.Attempt
	u     *url.URL
	shown string // what messages show of the URL
	rec   *recorder
	cfg   transport.Config // the session's, with the TLS watch's configuration
	tw    *transport.TLSWatch
}

// run makes one attempt on rawURL and, when accepted, streams the session.
func (s *session) run(ctx context.Context, rawURL string, offer transport.Offer) (transport.Attempt, error) {
	a, err := s.newAttempt(rawURL, offer)
	if err != nil {
		return a.att, err
	}
	// A server that takes the connection but never answers the upgrade
	// would hold crisp forever: bound the handshake, not the session.
	attemptCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.cancelRun = cancel
	s.mu.Unlock()
	exec, err := a.executor()
	if err != nil {
		a.att.Err = fmt.Errorf("%s: setting up %s for %s: %w", s.op, offer, a.shown, err)
		return a.att, a.att.Err
	}
	defer s.boundUpgrade(ctx, a.rec, cancel)()
	defer a.rec.final.release() // statuswatch.go: a held v1 connection closes here
	s.tr.line("%s: offering %s at %s", s.op, offer, a.shown)
	err = exec.StreamWithContext(attemptCtx, clientremotecommand.StreamOptions{
		Stdin: s.s.Stdin, Stdout: s.s.Stdout, Stderr: s.s.Stderr, Tty: s.s.TTY, TerminalSizeQueue: s.s.Resize,
	})
	if a.rec.accepted() {
		return a.att, s.acceptedOutcome(ctx, a, err)
	}
	return a.att, s.failedUpgrade(ctx, a, err)
}

// newAttempt checks rawURL and sets up the attempt's recorder, whose
// accept callback is s.accept.
func (s *session) newAttempt(rawURL string, offer transport.Offer) (*attempt, error) {
	a := &attempt{att: transport.Attempt{Offer: offer, URL: rawURL}, shown: transport.Shorten(rawURL)}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		a.att.Err = fmt.Errorf("%s: the runtime returned a streaming URL crisp cannot use: %q (want http:// or https://)", s.op, a.shown)
		return a, a.att.Err
	}
	a.u = u
	a.cfg, a.tw = transport.WatchTLS(s.cfg, rawURL)
	a.rec = &recorder{offer: offer, url: rawURL, peerBound: s.cfg.PeerBound()}
	a.rec.onAccept = func(status int, protocol string, upgrade time.Duration) error {
		return s.accept(a, status, protocol, upgrade)
	}
	return a, nil
}

// accept records an accepted upgrade: the attempt, the protocol's
// catalogue entry, and the guard that may end the session at once
// (guard.go). A non-nil error stops the session before it starts.
func (s *session) accept(a *attempt, status int, protocol string, upgrade time.Duration) error {
	a.att.Status, a.att.Protocol, a.att.Upgrade, a.att.TLS = status, protocol, upgrade, a.tw.Result()
	spec := lookupSpec(transport.Protocol{Transport: a.att.Transport, Name: protocol})
	s.mu.Lock()
	s.accepted, s.acceptedSpec, s.timing.accepted = a.att, spec, time.Now()
	if s.needsStdinEOF(spec) {
		s.fatal = stdinEOFError(s.op, a.att.Offer, protocol)
	}
	fatal := s.fatal
	s.mu.Unlock()
	s.tr.fileTrace().Handshake(a.att)
	s.cfg.Log("%s: negotiated %s %s at %s (HTTP %d, upgrade %s)", s.op, a.att.Transport.Title(), protocol, a.shown, status, upgrade.Round(time.Microsecond))
	transport.ReportTLS(s.cfg, s.op, a.shown, a.att.TLS)
	if fatal == nil && s.cfg.Upgraded != nil {
		s.cfg.Upgraded()
	}
	return fatal
}

// executor is the client that speaks the attempt's offer: client-go's for
// SPDY and the binary WebSocket framings, crisp's own for base64 (which
// client-go's cannot read).
func (a *attempt) executor() (clientremotecommand.Executor, error) {
	offer := a.att.Offer
	switch offer.Transport {
	case transport.SPDY:
		return newSPDYExecutor(a.cfg, a.u, offer.Protocols, a.rec)
	case transport.WebSocket:
		specs := make([]protocolSpec, len(offer.Protocols))
		for i, p := range offer.Protocols {
			specs[i] = lookupSpec(transport.Protocol{Transport: offer.Transport, Name: p})
		}
		if len(specs) > 0 && specs[0].Framing == transport.FramingBase64 {
			return newBase64Executor(a.cfg, a.att.URL, specs, a.rec)
		}
		return newWebSocketExecutor(a.cfg, a.att.URL, offer.Protocols, a.rec)
	}
	return nil, fmt.Errorf("unknown transport %q", offer.Transport)
}

// boundUpgrade ends a pending upgrade when ctx ends or the upgrade timeout
// passes first; the returned function stops both watches.
func (s *session) boundUpgrade(ctx context.Context, rec *recorder, cancel context.CancelFunc) (stop func()) {
	stopAbort := context.AfterFunc(ctx, rec.abort)
	if s.cfg.UpgradeTimeout <= 0 {
		return func() { stopAbort() }
	}
	timer := time.AfterFunc(s.cfg.UpgradeTimeout, func() {
		if rec.timeOut() {
			cancel()
		}
	})
	return func() {
		timer.Stop()
		stopAbort()
	}
}

// acceptedOutcome is the result of a session that was upgraded: a guard's
// or a local write's failure, the server's error text (v1), a status that
// never came, or outcome's reading of what client-go returned.
func (s *session) acceptedOutcome(ctx context.Context, a *attempt, err error) error {
	if ferr := s.failure(); ferr != nil && ctx.Err() == nil {
		return ferr
	}
	spec := s.negotiatedSpec()
	if a.att.Protocol == "" {
		// SPDY servers may answer without a version header: client-go then
		// speaks v1, and so do we in messages.
		a.att.Protocol = transport.ExecProtocolV1
		spec = lookupSpec(transport.Protocol{Transport: a.att.Transport, Name: a.att.Protocol})
	}
	if a.rec.final.tooLong.Load() {
		// WebSocket v2-v5: the filter cut a flooded error channel
		// (statuswatch_ws.go); client-go saw only a closed connection.
		err = errStatusTooLong
	}
	if err == nil && ctx.Err() == nil {
		// v1: client-go returned when stdout and stderr ended; the
		// server's error text follows them (statuswatch.go).
		text, readErr := a.rec.final.awaitText(ctx)
		switch {
		case strings.TrimSpace(text) != "":
			err = fmt.Errorf("error executing remote command: %s", text)
		case readErr != nil:
			err = fmt.Errorf("reading the error stream: %w", readErr)
		}
	}
	if err == nil && a.att.Transport == transport.SPDY && spec.statusCarrying() && !a.rec.final.seen.Load() && ctx.Err() == nil {
		how := ""
		if end := a.rec.final.connEnd(); end != nil {
			how = " (" + end.Error() + ")"
		}
		err = fmt.Errorf("the connection ended without the command's exit status%s: the runtime dropped the stream, so output may be incomplete", how)
	}
	if dead := a.rec.peerDead(); dead != nil && err != nil && remoteExit(spec, err) == nil && ctx.Err() == nil {
		// The liveness watch or the kernel ended the connection
		// (transport/liveness): that, and what was seen last, is why.
		s.tr.fileTrace().Close("remote", tracefile.StreamClose)
		return fmt.Errorf("%s: the session over %s %s (%s) ended: %w", s.op, a.att.Transport.Title(), a.att.Protocol, a.shown, dead)
	}
	return s.outcome(ctx, a.att, spec, err)
}

// failedUpgrade explains an attempt the server did not upgrade: a refusal
// (the caller may fall back), a timeout, the caller's end, or a connection
// or TLS failure; it records the answer in a.att.
func (s *session) failedUpgrade(ctx context.Context, a *attempt, err error) error {
	offer, rawURL := a.att.Offer, a.att.URL
	if err == nil {
		err = fmt.Errorf("%s: %s at %s ended without an upgrade", s.op, offer, a.shown)
	}
	err = transport.ShortenIn(err, rawURL)
	a.att.Status, a.att.Reason, a.att.Upgrade = a.rec.status, a.rec.reason, a.rec.upgrade
	var refused *transport.RefusedError
	switch {
	case errors.As(err, &refused):
		a.att.Err = refused
	case a.rec.timedOut():
		a.att.Err = &transport.UpgradeTimeoutError{Op: s.op, Offer: offer, URL: rawURL, After: s.cfg.UpgradeTimeout, Hint: "raise --request-timeout to wait longer"}
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || deadlinePassed(ctx):
		// The caller's own deadline (probe's --attempt-timeout) came first.
		a.att.Err = &transport.UpgradeTimeoutError{Op: s.op, Offer: offer, URL: rawURL, After: time.Since(s.start)}
	case ctx.Err() != nil:
		a.att.Err = ctx.Err()
	default:
		if tlsErr := a.tw.Describe(err); tlsErr.Error() != err.Error() {
			a.att.Err = fmt.Errorf("%s: %w", s.op, tlsErr)
			break
		}
		a.att.Err = fmt.Errorf("%s: connecting to the runtime's streaming server at %s with %s: %w; is the streaming server running and reachable from here?", s.op, a.shown, offer, err)
	}
	s.tr.fileTrace().Handshake(a.att)
	return a.att.Err
}
