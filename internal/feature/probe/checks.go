package probe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/crisp-cri/crisp/internal/client"
)

// This file is the check registry: every functional check probe and smoke
// run, declared once with the call it exercises, the suites that run it,
// the capabilities (from transport's catalogue) a protocol needs to carry
// it, and its run function. Probe and smoke both run their checks from
// here (Attempt.run), so adding a check is one entry below.

// Suite says which command runs a check.
type Suite uint8

// The suites.
const (
	// SuiteProbe: probe's per-protocol functional checks, run on the
	// attempt whose upgrade probe recorded.
	SuiteProbe Suite = 1 << iota
	// SuiteSmoke: smoke's battery, run on every accepted protocol.
	SuiteSmoke
)

// Need is a capability of transport's catalogue a check needs; on a
// protocol without it the check is skipped, with the reason.
type Need string

// The capabilities checks can need.
const (
	NeedExitCode  Need = "exit-code"
	NeedStdinEOF  Need = "stdin-eof"
	NeedResize    Need = "resize"
	NeedHalfClose Need = "half-close"
)

// in reports whether caps carries n.
func (n Need) in(caps Capabilities) bool {
	switch n {
	case NeedExitCode:
		return caps.ExitCode
	case NeedStdinEOF:
		return caps.StdinEOF
	case NeedResize:
		return caps.Resize
	case NeedHalfClose:
		return caps.HalfClose
	}
	return false
}

// CheckDef declares one check.
type CheckDef struct {
	// Name is the check's name in reports.
	Name   string
	Call   Call
	Suites Suite
	// Needs are the capabilities the protocol must carry; the check is
	// skipped (with the reason) on a protocol that lacks one.
	Needs []Need
	// Requires, when set, reports whether the shared state this check
	// builds on exists (a chained check: probe's stdin-eof reads the `cat`
	// session of its output check). A check whose requirement is unmet is
	// left out of the report: the check it builds on has said why.
	Requires func(*Attempt) bool
	// Run runs the check; the runner fills in its name. ctx is the run's:
	// a check bounds its own sessions (Attempt.Timeout).
	Run func(ctx context.Context, a *Attempt) Check
}

// Skipped says why d cannot run on a protocol with caps, if it cannot.
func (d CheckDef) Skipped(p Protocol, caps Capabilities) (reason string, skip bool) {
	for _, n := range d.Needs {
		if !n.in(caps) {
			return missing(string(n), p), true
		}
	}
	return "", false
}

// registry is every check, in the order reports list them.
var registry = []CheckDef{
	// probe, exec: chained on the handshake's session, then fresh URLs.
	{Name: CheckExitCode, Call: CallExec, Suites: SuiteProbe, Requires: hasFirst, Run: probeExitCode},
	{Name: CheckOutput, Call: CallExec, Suites: SuiteProbe, Run: probeCatOutput},
	{Name: CheckStdinEOF, Call: CallExec, Suites: SuiteProbe, Needs: []Need{NeedStdinEOF},
		Requires: func(a *Attempt) bool { return a.cat != nil }, Run: probeCatEOF},
	{Name: CheckResize, Call: CallExec, Suites: SuiteProbe, Needs: []Need{NeedResize}, Run: probeResize},
	// probe, attach: what the handshake's session read.
	{Name: CheckOutput, Call: CallAttach, Suites: SuiteProbe, Requires: hasFirst, Run: probeAttachOutput},
	// probe, port-forward: the handshake's connection, then a fresh one.
	{Name: CheckRoundTrip, Call: CallPortForward, Suites: SuiteProbe, Requires: hasFirst, Run: probeRoundTrip},
	{Name: CheckHalfClose, Call: CallPortForward, Suites: SuiteProbe, Needs: []Need{NeedHalfClose},
		Requires: func(a *Attempt) bool { return a.roundTripped }, Run: probeHalfClose},

	// smoke: every check on a fresh URL.
	{Name: SmokeEcho, Call: CallExec, Suites: SuiteSmoke, Run: smokeEcho},
	{Name: SmokeSeparate, Call: CallExec, Suites: SuiteSmoke, Run: smokeSeparate},
	{Name: SmokeExitCode, Call: CallExec, Suites: SuiteSmoke, Run: smokeExitCode},
	{Name: SmokeStdinEOF, Call: CallExec, Suites: SuiteSmoke, Needs: []Need{NeedStdinEOF}, Run: smokeStdinEOF},
	{Name: SmokeIntegrity, Call: CallExec, Suites: SuiteSmoke, Run: smokeIntegrity},
	{Name: SmokeTTY, Call: CallExec, Suites: SuiteSmoke, Needs: []Need{NeedResize}, Run: smokeTTY},
	{Name: SmokeAttach, Call: CallAttach, Suites: SuiteSmoke, Run: smokeAttach},
	{Name: SmokeForward, Call: CallPortForward, Suites: SuiteSmoke, Run: smokeForward},
}

func hasFirst(a *Attempt) bool { return a.First != nil }

// Checks returns every registered check, in report order.
func Checks() []CheckDef { return slices.Clone(registry) }

// ChecksFor returns the checks suite runs for call, in report order.
func ChecksFor(suite Suite, call Call) []CheckDef {
	var out []CheckDef
	for _, d := range registry {
		if d.Suites&suite != 0 && d.Call == call {
			out = append(out, d)
		}
	}
	return out
}

// Attempt is what a check runs against: one call and protocol on one
// target, a way to open sessions on fresh URLs, and the state checks
// share. Probe's checks chain on First, the session whose upgrade probe
// recorded; smoke's open their own.
type Attempt struct {
	Call     Call
	Protocol Protocol
	// Caps is what Protocol carries for Call (transport's catalogue).
	Caps   Capabilities
	Target Target
	// Timeout bounds each session a check opens.
	Timeout time.Duration
	// First is the handshake's session (probe only; nil in smoke).
	First *FirstSession

	urls     URLs
	streamer Streamer
	// waiting, when set, watches a slow upgrade (probe's progress).
	waiting func(Call, Protocol) (stop func())

	// quiet is the run's finding that the main process prints nothing
	// (smoke's attach check; nil outside a run).
	quiet *quietWatch

	// State chained checks share.
	cat          *catSession // probe's exec output check's `cat`
	roundTripped bool        // probe's round-trip check used First.Conn
}

// FirstSession is what the session of probe's handshake left for the
// checks chained on it.
type FirstSession struct {
	// Ctx is the handshake's context, alive while the checks run (the
	// forwarded connection lives in it).
	Ctx context.Context
	// Cmd is the exec command the handshake ran; UserCmd says it is the
	// user's (so its outcome cannot be predicted).
	Cmd     []string
	UserCmd bool
	// Err is the session's error; Stdout and Stderr what it printed.
	Err            error
	Stdout, Stderr string
	// Expired (attach): the read window ended before any output.
	Expired bool
	Window  time.Duration
	// QuietNote says which earlier protocol's session also saw nothing
	// (quietWatch), or is empty.
	QuietNote string
	// Conn (port-forward) is the connection opened with the handshake;
	// the check that uses it takes it (sets it nil) and closes it.
	Conn Conn
}

func newAttempt(call Call, p Protocol, t Target, urls URLs, s Streamer, timeout time.Duration) *Attempt {
	return &Attempt{Call: call, Protocol: p, Caps: capabilities(call, p), Target: t, Timeout: timeout, urls: urls, streamer: s}
}

// run runs suite's checks for a.Call in registry order, handing each
// verdict and its duration to report. It stops when ctx ends.
func (a *Attempt) run(ctx context.Context, suite Suite, report func(Check, time.Duration)) error {
	for _, d := range ChecksFor(suite, a.Call) {
		if err := runOver(ctx); err != nil {
			return err
		}
		if d.Requires != nil && !d.Requires(a) {
			continue
		}
		began := time.Now()
		var c Check
		if why, skip := d.Skipped(a.Protocol, a.Caps); skip {
			c = Check{Outcome: Skip, Detail: why}
		} else {
			c = d.Run(ctx, a)
		}
		c.Name = d.Name
		report(c, time.Since(began))
	}
	return nil
}

// checks runs suite's checks and returns their verdicts.
func (a *Attempt) checks(ctx context.Context, suite Suite) []Check {
	var out []Check
	_ = a.run(ctx, suite, func(c Check, _ time.Duration) { out = append(out, c) }) // an interrupted run is the caller's to report
	return out
}

// opened is one session on a fresh URL.
type opened struct {
	Handshake
	// RPC is how long the CRI call took; RPCErr its failure (then no
	// stream was attempted).
	RPC    time.Duration
	RPCErr error
	// Err is the session's error.
	Err error
}

// open makes a fresh URL with rpc and runs one stream of a.Protocol on it.
func (a *Attempt) open(ctx context.Context, rpc func(context.Context) (string, error), s Session) opened {
	start := time.Now()
	url, err := rpc(ctx)
	o := opened{RPC: time.Since(start)}
	if err != nil {
		o.RPCErr, o.Err = err, err
		return o
	}
	stop := func() {}
	if a.waiting != nil {
		stop = a.waiting(a.Call, a.Protocol)
	}
	o.Handshake, o.Err = a.streamer.Stream(ctx, url, a.Protocol, s)
	stop()
	return o
}

// attempt is open recorded into res (probe's view of a session): the
// handshake fields, or the error before any answer.
func (a *Attempt) attempt(ctx context.Context, res *Result, rpc func(context.Context) (string, error), s Session) (accepted bool, err error) {
	o := a.open(ctx, rpc, s)
	res.RPC = Millis(o.RPC)
	if o.RPCErr != nil {
		recordRPCError(ctx, res, o.RPCErr)
		return false, o.RPCErr
	}
	recordHandshake(res, o.Handshake, o.Err)
	return o.Accepted, o.Err
}

// recordRPCError records the failed CRI call that was to hand out the
// attempt's URL; one the attempt's deadline ended is a timeout, worded as
// such (gRPC's own words are a bare "context deadline exceeded").
func recordRPCError(ctx context.Context, res *Result, err error) {
	res.Error = err.Error()
	if res.TimedOut = rpcTimedOut(ctx, err); res.TimedOut {
		res.Error = fmt.Sprintf("the runtime did not answer the CRI %s call (the one that hands out the streaming URL) before the attempt's deadline: is it overloaded?", res.Call)
	}
}

// runOver is ctx's error, or DeadlineExceeded once ctx's deadline has come
// though its timer has not fired yet: a runtime enforcing the deadline it
// was sent answers DeadlineExceeded a moment early, and the results of
// that moment are the run's end, not the runtime's verdict.
func runOver(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if client.DeadlineReached(ctx, time.Now()) {
		return context.DeadlineExceeded
	}
	return nil
}

// rpcTimedOut: the attempt's deadline ended the CRI call that makes its
// URL (a busy runtime), so, as for an upgrade with no answer in time,
// nothing is known of the protocol: a timeout, not a failure.
func rpcTimedOut(ctx context.Context, err error) bool {
	return err != nil && (errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded))
}

// handshakeWindow bounds an attach handshake that only looks for the
// upgrade: the RPC, the upgrade and a moment of output.
const handshakeWindow = time.Second

// quietWatch carries one finding across a run's attach sessions: the main
// process printed nothing for a whole read window. Later protocols then wait
// only a handshake's window (the bound the handshake probe already puts on an
// attach upgrade), so a quiet container costs the full window once per run
// rather than once per protocol (ten of them on a full runtime). A nil
// quietWatch keeps every window whole.
type quietWatch struct {
	over   Protocol      // the first protocol whose session saw nothing
	waited time.Duration // its window
}

// window is the read window for the next attach session.
func (q *quietWatch) window(full time.Duration) time.Duration {
	if q == nil || q.waited == 0 {
		return full
	}
	return min(full, handshakeWindow)
}

// saw records that a session over p read nothing within w and words, for
// its skip, the finding of an earlier protocol ("" for the first).
func (q *quietWatch) saw(p Protocol, w time.Duration) (note string) {
	if q == nil {
		return ""
	}
	if q.waited == 0 {
		q.over, q.waited = p, w
		return ""
	}
	return fmt.Sprintf(" (nor within %s over %s)", q.waited, q.over)
}
