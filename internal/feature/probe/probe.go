package probe

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
)

// ProbeReport is probe's answer: every call and protocol tried alone.
type ProbeReport struct {
	Origin
	Container string   `json:"container"`
	Pod       string   `json:"pod"`
	Port      int32    `json:"port,omitempty"`
	Results   []Result `json:"results"`
	Summary   Summary  `json:"summary"`
}

// Result is one protocol offered alone for one call, with a fresh URL.
type Result struct {
	Call Call `json:"call"`
	Protocol
	Accepted bool `json:"accepted"`
	// Status and Reason are the HTTP answer to a refused upgrade.
	Status     int    `json:"status,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Negotiated string `json:"negotiated,omitempty"`
	// RPC is the latency of the CRI call that made the URL; Upgrade that
	// of the HTTP upgrade.
	RPC     Millis  `json:"rpcMs"`
	Upgrade Millis  `json:"upgradeMs"`
	Checks  []Check `json:"checks,omitempty"`
	// TimedOut: the streaming server answered neither yes nor no in time
	// (Error says how long crisp waited); the protocol may well be spoken.
	TimedOut bool `json:"timedOut,omitempty"`
	// Error is set when the attempt failed before an HTTP answer (RPC
	// failure, unreachable streaming server, timeout).
	Error string `json:"error,omitempty"`
}

// Kind is the result's kind: accepted, refused, timeout or failed.
func (r Result) Kind() string {
	switch {
	case r.Accepted:
		return "accepted"
	case r.TimedOut:
		return "timeout"
	case r.Status != 0:
		return "refused"
	}
	return "failed"
}

// Check returns the named check, if it ran.
func (r Result) Check(name string) (Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return Check{}, false
}

// Summary says what --transport auto picks and which gaps matter.
type Summary struct {
	Auto []AutoPick `json:"auto"`
	Gaps []string   `json:"gaps"`
}

// AutoPick is auto's choice for one call; Protocol is empty when the
// runtime accepts nothing auto can use.
type AutoPick struct {
	Call     Call      `json:"call"`
	Protocol *Protocol `json:"pick,omitempty"`
	Step     string    `json:"step,omitempty"`
	// Why, when auto picks nothing, says whether the steps were refused,
	// timed out, failed, or a mix: a refusal is the runtime's answer, a
	// timeout is no answer at all.
	Why string `json:"why,omitempty"`
}

// Accepted reports whether p was accepted for call.
func (r *ProbeReport) Accepted(call Call, p Protocol) bool {
	for _, res := range r.Results {
		if res.Call == call && res.Protocol == p {
			return res.Accepted
		}
	}
	return false
}

// Auto returns auto's pick for call.
func (r *ProbeReport) Auto(call Call) (Protocol, bool) {
	for _, a := range r.Summary.Auto {
		if a.Call == call && a.Protocol != nil {
			return *a.Protocol, true
		}
	}
	return Protocol{}, false
}

// Names of the functional checks probe runs.
const (
	CheckExitCode  = "exit-code"
	CheckOutput    = "output"
	CheckStdinEOF  = "stdin-eof"
	CheckResize    = "resize"
	CheckRoundTrip = "round-trip"
	CheckHalfClose = "half-close"
)

// Prober runs probe. Zero Timeout means 10s per attempt.
type Prober struct {
	URLs     URLs
	Streamer Streamer
	// Timeout bounds each attempt (RPC, upgrade and check).
	Timeout time.Duration
	// Calls limits the matrix to these calls (all when empty).
	Calls []Call
	// SkipChecks tries the handshakes only (smoke and bench use it to find
	// what the runtime accepts).
	SkipChecks bool
	// Progress, when set, hears of attempts that are slow to get an
	// answer (progress.go), so a stuck runtime does not look like a stuck
	// crisp.
	Progress func(format string, args ...any)
	// SlowAfter is when an attempt counts as slow (2s if zero).
	SlowAfter time.Duration
}

func (p *Prober) timeout() time.Duration {
	if p.Timeout > 0 {
		return p.Timeout
	}
	return client.DefaultRequestTimeout
}

func (p *Prober) wants(call Call) bool {
	if len(p.Calls) == 0 {
		return true
	}
	for _, c := range p.Calls {
		if c == call {
			return true
		}
	}
	return false
}

// probePayload is what echo checks send; the CRLFs make an HTTP server
// answer too.
const probePayload = "crisp-probe\r\n\r\n"

// Run tries every protocol of the matrix alone, each with a fresh URL, and
// summarises. It fails only when ctx ends or target is unusable; refusals
// and failed checks are data in the report.
func (p *Prober) Run(ctx context.Context, t Target) (*ProbeReport, error) {
	if err := t.validate(); err != nil {
		return nil, err
	}
	rep := &ProbeReport{Container: t.ContainerID, Pod: t.PodID, Port: t.Port}
	quiet := &quietWatch{}
	for _, row := range Matrix() {
		if !p.wants(row.Call) {
			continue
		}
		for _, proto := range row.Protocols {
			if err := runOver(ctx); err != nil {
				return rep, err
			}
			var res Result
			switch row.Call {
			case CallExec:
				res = p.probeExec(ctx, t, proto)
			case CallAttach:
				res = p.probeAttach(ctx, t, proto, quiet)
			case CallPortForward:
				res = p.probeForward(ctx, t, proto)
			}
			rep.Results = append(rep.Results, res)
		}
	}
	if err := runOver(ctx); err != nil {
		return rep, err
	}
	rep.Summary = summarise(rep, p)
	return rep, nil
}

// attemptFor is the check context of one protocol: the handshake's
// session, once made, and the registry's probe checks (checks.go).
func (p *Prober) attemptFor(call Call, t Target, proto Protocol) *Attempt {
	a := newAttempt(call, proto, t, p.URLs, p.Streamer, p.timeout())
	a.waiting = p.waiting
	return a
}

func recordHandshake(res *Result, hs Handshake, err error) {
	res.Accepted = hs.Accepted
	res.Status = hs.Status
	res.Reason = hs.Reason
	res.Negotiated = hs.Negotiated
	res.Upgrade = Millis(hs.Upgrade)
	res.TimedOut = hs.TimedOut
	if !hs.Accepted && hs.Status == 0 && err != nil {
		res.Error = err.Error()
	}
}

// probeExec makes the handshake with `true` (or the user's command); the
// registry's exec checks judge its exit and open sessions of their own.
func (p *Prober) probeExec(ctx context.Context, t Target, proto Protocol) Result {
	res := Result{Call: CallExec, Protocol: proto}
	a := p.attemptFor(CallExec, t, proto)
	ctx1, cancel := context.WithTimeout(ctx, p.timeout())
	defer cancel()

	cmd := []string{"true"}
	if len(t.Command) > 0 {
		cmd = t.Command
	}
	var out, errOut bytes.Buffer
	rpc := func(ctx context.Context) (string, error) {
		return p.URLs.Exec(ctx, &runtimeapi.ExecRequest{ContainerId: t.ContainerID, Cmd: cmd, Stdout: true, Stderr: true})
	}
	ok, err := a.attempt(ctx1, &res, rpc, Session{Stdout: &out, Stderr: &errOut})
	if !ok || p.SkipChecks {
		return res
	}
	a.First = &FirstSession{Ctx: ctx1, Cmd: cmd, UserCmd: len(t.Command) > 0, Err: err, Stdout: out.String(), Stderr: errOut.String()}
	res.Checks = a.checks(ctx, SuiteProbe)
	return res
}

// probeAttach makes the handshake as a read-only session; the registry's
// attach check judges what it read.
func (p *Prober) probeAttach(ctx context.Context, t Target, proto Protocol, quiet *quietWatch) Result {
	res := Result{Call: CallAttach, Protocol: proto}
	a := p.attemptFor(CallAttach, t, proto)
	// Attach probes only read: the session is ended after the first output
	// or this window, whichever comes first. Handshake-only probes (smoke
	// and bench finding what is accepted) wait less.
	window := 2 * time.Second
	if p.SkipChecks {
		window = handshakeWindow
	}
	window = quiet.window(window)
	if window > p.timeout() {
		window = p.timeout()
	}
	ctx1, cancel := context.WithTimeout(ctx, window)
	defer cancel()
	out := newWatchWriter("", nil)
	out.anyOutput = cancel
	rpc := func(ctx context.Context) (string, error) {
		return p.URLs.Attach(ctx, &runtimeapi.AttachRequest{ContainerId: t.ContainerID, Stdout: true, Stderr: true})
	}
	ok, err := a.attempt(ctx1, &res, rpc, Session{Stdout: out, Stderr: out})
	if !ok || p.SkipChecks {
		return res
	}
	a.First = &FirstSession{Ctx: ctx1, Err: err, Stdout: out.String(), Window: window,
		Expired: ctx.Err() == nil && ctx1.Err() != nil}
	if a.First.Expired && a.First.Stdout == "" {
		a.First.QuietNote = quiet.saw(proto, window)
	}
	res.Checks = a.checks(ctx, SuiteProbe)
	return res
}

func errText(err error, res Result) string {
	if res.Status != 0 {
		return fmt.Sprintf("HTTP %d %s", res.Status, res.Reason)
	}
	if err != nil {
		return err.Error()
	}
	return "no answer"
}

// clip shortens s for messages.
func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// watchWriter collects output and cancels when want has been seen (or, with
// anyOutput, at the first byte).
type watchWriter struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	want      string
	onWant    func()
	anyOutput context.CancelFunc
	// once calls onWant the first time only.
	once bool
}

func newWatchWriter(want string, onWant func()) *watchWriter {
	return &watchWriter{want: want, onWant: onWant}
}

func (w *watchWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(b)
	if w.anyOutput != nil && w.buf.Len() > 0 {
		w.anyOutput()
	}
	if w.onWant != nil && w.want != "" && strings.Contains(w.buf.String(), w.want) {
		w.onWant()
		if w.once {
			w.onWant = nil
		}
	}
	return len(b), nil
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
