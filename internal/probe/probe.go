package probe

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
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
	return 10 * time.Second
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
	for _, row := range Matrix() {
		if !p.wants(row.Call) {
			continue
		}
		for _, proto := range row.Protocols {
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			var res Result
			switch row.Call {
			case CallExec:
				res = p.probeExec(ctx, t, proto)
			case CallAttach:
				res = p.probeAttach(ctx, t, proto)
			case CallPortForward:
				res = p.probeForward(ctx, t, proto)
			}
			rep.Results = append(rep.Results, res)
		}
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	rep.Summary = summarise(rep, p)
	return rep, nil
}

// attempt makes a fresh URL with rpc and runs one stream on it, filling
// the handshake fields of res. It returns the session's error and whether
// the upgrade was accepted.
func (p *Prober) attempt(ctx context.Context, res *Result, rpc func(context.Context) (string, error), proto Protocol, s Session) (accepted bool, err error) {
	start := time.Now()
	url, err := rpc(ctx)
	res.RPC = Millis(time.Since(start))
	if err != nil {
		res.Error = err.Error()
		return false, err
	}
	stop := p.waiting(res.Call, proto)
	hs, err := p.Streamer.Stream(ctx, url, proto, s)
	stop()
	recordHandshake(res, hs, err)
	return hs.Accepted, err
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

func (p *Prober) probeExec(ctx context.Context, t Target, proto Protocol) Result {
	res := Result{Call: CallExec, Protocol: proto}
	caps := capabilities(CallExec, proto)
	ctx1, cancel := context.WithTimeout(ctx, p.timeout())
	defer cancel()

	// Handshake and exit code: `true`, or the user's command.
	cmd := []string{"true"}
	if len(t.Command) > 0 {
		cmd = t.Command
	}
	var out, errOut bytes.Buffer
	rpc := func(ctx context.Context) (string, error) {
		return p.URLs.Exec(ctx, &runtimeapi.ExecRequest{ContainerId: t.ContainerID, Cmd: cmd, Stdout: true, Stderr: true})
	}
	ok, err := p.attempt(ctx1, &res, rpc, proto, Session{Stdout: &out, Stderr: &errOut})
	if !ok || p.SkipChecks {
		return res
	}
	exit := exitCodeCheck(proto, caps, cmd, err, out.String(), errOut.String(), len(t.Command) == 0)
	if len(t.Command) > 0 {
		// The user's command: we cannot know what to expect, so say what it printed.
		exit.Detail += fmt.Sprintf("; it printed %d bytes on stdout, %d on stderr", out.Len(), errOut.Len())
	}
	res.Checks = append(res.Checks, exit)
	res.Checks = append(res.Checks, p.catChecks(ctx, t, proto, caps)...)
	res.Checks = append(res.Checks, p.resizeCheck(ctx, t, proto, caps))
	return res
}

func exitCodeCheck(proto Protocol, caps Capabilities, cmd []string, err error, stdout, stderr string, expectZero bool) Check {
	c := Check{Name: CheckExitCode}
	code, ok := exitStatus(err)
	switch {
	case ok && expectZero && code != 0:
		c.Outcome, c.Detail = Fail, fmt.Sprintf("%q exited %d, want 0 (stderr %q)", strings.Join(cmd, " "), code, clip(stderr))
	case ok:
		c.Outcome, c.Detail = Pass, fmt.Sprintf("%q exited %d", strings.Join(cmd, " "), code)
		if !caps.ExitCode {
			c.Detail += " (no error text, so success; " + missing("exit-code", proto) + ")"
		}
	case !caps.ExitCode:
		c.Outcome, c.Detail = Pass, fmt.Sprintf("error text only: %v", err)
		if expectZero {
			c.Outcome, c.Detail = Fail, fmt.Sprintf("%q failed: %v", strings.Join(cmd, " "), err)
		}
	default:
		c.Outcome, c.Detail = Fail, fmt.Sprintf("%q: no exit status, the stream failed: %v", strings.Join(cmd, " "), err)
	}
	return c
}

// catChecks runs `cat` with a payload on stdin: the output must echo it,
// and closing stdin must end the command where the protocol can close it.
func (p *Prober) catChecks(ctx context.Context, t Target, proto Protocol, caps Capabilities) []Check {
	res := Result{Call: CallExec}
	ctx1, cancel := context.WithTimeout(ctx, p.timeout())
	defer cancel()
	out := newWatchWriter(probePayload, cancel)
	var errOut bytes.Buffer
	rpc := func(ctx context.Context) (string, error) {
		return p.URLs.Exec(ctx, &runtimeapi.ExecRequest{ContainerId: t.ContainerID, Cmd: []string{"cat"}, Stdin: true, Stdout: true, Stderr: true})
	}
	s := Session{Stdin: strings.NewReader(probePayload), Stdout: out, Stderr: &errOut, CloseStdin: caps.StdinEOF}
	if caps.StdinEOF {
		// The command must end by itself once stdin closes.
		out = newWatchWriter("", nil)
		s.Stdout = out
	}
	ok, err := p.attempt(ctx1, &res, rpc, proto, s)
	if !ok {
		return []Check{{Name: CheckOutput, Outcome: Fail, Detail: "a second URL for `cat` was refused: " + errText(err, res)}}
	}
	got := out.String()
	output := Check{Name: CheckOutput, Outcome: Pass, Detail: fmt.Sprintf("`cat` echoed %d bytes", len(got))}
	if got != probePayload {
		output.Outcome, output.Detail = Fail, fmt.Sprintf("`cat` echoed %q, want %q (stderr %q, error %v)", clip(got), probePayload, clip(errOut.String()), err)
	}
	eof := Check{Name: CheckStdinEOF}
	switch {
	case !caps.StdinEOF:
		eof.Outcome, eof.Detail = Skip, missing("stdin-eof", proto)
	case ctx1.Err() != nil && ctx.Err() == nil:
		eof.Outcome, eof.Detail = Fail, fmt.Sprintf("`cat` did not end within %s after stdin was closed", p.timeout())
	default:
		if code, ok := exitStatus(err); ok && code == 0 {
			eof.Outcome, eof.Detail = Pass, "`cat` ended when stdin was closed"
		} else {
			eof.Outcome, eof.Detail = Fail, fmt.Sprintf("`cat` ended with %v after stdin was closed", err)
		}
	}
	return []Check{output, eof}
}

// resizeCheck runs the TTY exchange (see ttyCheck) on a fresh URL.
func (p *Prober) resizeCheck(ctx context.Context, t Target, proto Protocol, caps Capabilities) Check {
	c := Check{Name: CheckResize}
	if !caps.Resize {
		c.Outcome, c.Detail = Skip, missing("resize", proto)
		return c
	}
	res := Result{Call: CallExec}
	ctx1, cancel := context.WithTimeout(ctx, p.timeout())
	defer cancel()
	tc := newTTYCheck()
	rpc := func(ctx context.Context) (string, error) {
		return p.URLs.Exec(ctx, &runtimeapi.ExecRequest{ContainerId: t.ContainerID, Cmd: tc.command(), Tty: true, Stdout: true})
	}
	ok, err := p.attempt(ctx1, &res, rpc, proto, tc.session())
	if !ok {
		c.Outcome, c.Detail = Fail, "a URL for the TTY check was refused: "+errText(err, res)
		return c
	}
	c.Outcome, c.Detail = tc.verdict(proto, err)
	return c
}

// ttyCheck is the terminal exchange probe and smoke run: a TTY whose size
// (37x101) is sent as the stream opens; the command prints it, then waits
// for the size to change; once the first size is seen, 40x120 is sent, and
// the command must print that too.
type ttyCheck struct {
	out    *watchWriter
	resize chan TermSize
}

func newTTYCheck() *ttyCheck {
	tc := &ttyCheck{resize: make(chan TermSize, 1)}
	tc.out = newWatchWriter("37 101", func() { tc.resize <- TermSize{Width: 120, Height: 40} })
	tc.out.once = true
	return tc
}

// command prints the size (after a pause: real runtimes may start the
// command before the first size is applied), polls up to
// 5 s for a change, and prints the size again.
func (tc *ttyCheck) command() []string {
	return []string{"sh", "-c", `sleep 0.3; s=$(stty size); echo "$s"; i=0; while [ "$s" = "37 101" ] && [ $i -lt 50 ]; do sleep 0.1; s=$(stty size); i=$((i+1)); done; echo "$s"`}
}

func (tc *ttyCheck) session() Session {
	return Session{Stdout: tc.out, TTY: true, Size: &TermSize{Width: 101, Height: 37}, Resize: tc.resize}
}

func (tc *ttyCheck) verdict(p Protocol, err error) (Outcome, string) {
	var lines []string
	for _, l := range strings.Split(tc.out.String(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	switch {
	case len(lines) == 0 && err == nil:
		return Fail, "on a TTY, the size command exited 0 but its output never arrived: the runtime lost the terminal's output" + lostTTYHint(p)
	case len(lines) == 2 && lines[0] == "37 101" && lines[1] == "40 120":
		return Pass, "a TTY; `stty size` saw 37 101 as sent at the start, then 40 120 after a resize"
	case len(lines) >= 1 && lines[0] != "37 101":
		return Fail, fmt.Sprintf("on a TTY sized 37x101 at the start, `stty size` printed %q (error %v)", clip(strings.Join(lines, "; ")), err)
	case len(lines) == 2 && lines[1] == "37 101":
		return Fail, "the initial size 37x101 arrived, but the resize to 40x120 never reached the terminal within 5s"
	}
	return Fail, fmt.Sprintf("on a TTY resized from 37x101 to 40x120, `stty size` printed %q (error %v)", clip(strings.Join(lines, "; ")), err)
}

func (p *Prober) probeAttach(ctx context.Context, t Target, proto Protocol) Result {
	res := Result{Call: CallAttach, Protocol: proto}
	// Attach probes only read: the session is ended after the first output
	// or this window, whichever comes first. Handshake-only probes (smoke
	// and bench finding what is accepted) wait less.
	window := 2 * time.Second
	if p.SkipChecks {
		window = time.Second
	}
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
	ok, err := p.attempt(ctx1, &res, rpc, proto, Session{Stdout: out, Stderr: out})
	if !ok || p.SkipChecks {
		return res
	}
	c := Check{Name: CheckOutput}
	switch got := out.String(); {
	case got != "":
		c.Outcome, c.Detail = Pass, fmt.Sprintf("read %d bytes from the main process", len(got))
	case ctx.Err() == nil && ctx1.Err() != nil:
		c.Outcome, c.Detail = Skip, fmt.Sprintf("the main process printed nothing within %s (attach probes only read)", window)
	default:
		c.Outcome, c.Detail = Fail, fmt.Sprintf("the stream ended without output: %v", err)
	}
	res.Checks = append(res.Checks, c)
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
