package probe

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/transport"
)

// Names of smoke's checks.
const (
	SmokeHandshake = "handshake"
	SmokeEcho      = "echo"
	SmokeSeparate  = "stdout-stderr"
	SmokeExitCode  = "exit-code"
	SmokeStdinEOF  = "stdin-eof"
	SmokeIntegrity = "integrity-16MiB"
	SmokeTTY       = "tty-resize"
	SmokeAttach    = "attach-output"
	SmokeForward   = "port-forward-round-trip"
)

// IntegritySize is what the integrity check moves through exec: 16 MiB.
const IntegritySize = 16 << 20

// SmokeCheck is one check on one call and protocol.
type SmokeCheck struct {
	Call Call `json:"call"`
	*Protocol
	// Auto is true when this is the protocol --transport auto picks, so
	// its failures fail the run.
	Auto bool `json:"auto"`
	Check
	Duration Millis `json:"durationMs"`
}

// Name is "call/transport protocol/check", the check's name in reports.
func (c SmokeCheck) Name() string {
	if c.Protocol == nil {
		return string(c.Call) + "/" + c.Check.Name
	}
	return string(c.Call) + "/" + c.String() + "/" + c.Check.Name
}

// SmokeReport is smoke's verdict.
type SmokeReport struct {
	Origin
	Container string       `json:"container"`
	Pod       string       `json:"pod"`
	Image     string       `json:"image,omitempty"`
	Strict    bool         `json:"strict"`
	Checks    []SmokeCheck `json:"checks"`
	Passed    int          `json:"passed"`
	Failed    int          `json:"failed"`
	Skipped   int          `json:"skipped"`
	Warnings  int          `json:"warnings"`
	Duration  Millis       `json:"durationMs"`
	// Error says why the run did not finish (interrupted, out of time);
	// such a run fails whatever its checks say.
	Error string `json:"error,omitempty"`
}

// OK reports whether the run passed.
func (r *SmokeReport) OK() bool { return r.Failed == 0 && r.Error == "" }

func (r *SmokeReport) add(c SmokeCheck, strict bool) {
	if c.Outcome == Fail && !c.Auto && !strict {
		c.Outcome = Warn
		c.Detail = "on a transport auto does not pick: " + c.Detail
	}
	switch c.Outcome {
	case Pass:
		r.Passed++
	case Fail:
		r.Failed++
	case Skip:
		r.Skipped++
	case Warn:
		r.Warnings++
	}
	r.Checks = append(r.Checks, c)
}

// Smoker runs the smoke battery.
type Smoker struct {
	URLs     URLs
	Streamer Streamer
	// Timeout bounds each check (default 30s).
	Timeout time.Duration
	// Strict makes defects on transports auto does not pick failures.
	Strict bool
	// Progress, when set, receives each check as it finishes.
	Progress func(SmokeCheck)
	// Waiting, when set, hears of handshakes slow to get an answer.
	Waiting func(format string, args ...any)
}

func (s *Smoker) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return 30 * time.Second
}

// Run finds the accepted protocols (a handshake-only probe) and runs the
// battery on every one of them. Failures are data in the report; the error
// is for an interrupted or impossible run.
func (s *Smoker) Run(ctx context.Context, t Target) (*SmokeReport, error) {
	if err := t.validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	rep := &SmokeReport{Container: t.ContainerID, Pod: t.PodID, Strict: s.Strict}
	defer func() { rep.Duration = Millis(time.Since(start)) }()
	prober := &Prober{URLs: s.URLs, Streamer: s.Streamer, Timeout: s.timeout(), SkipChecks: true, Progress: s.Waiting}
	matrix, err := prober.Run(ctx, t)
	if err != nil {
		return rep, err
	}
	record := func(c SmokeCheck) {
		rep.add(c, s.Strict)
		if s.Progress != nil {
			s.Progress(rep.Checks[len(rep.Checks)-1])
		}
	}
	for _, row := range Matrix() {
		auto, autoOK := matrix.Auto(row.Call)
		if !autoOK {
			record(SmokeCheck{Call: row.Call, Auto: true, Check: Check{Name: SmokeHandshake, Outcome: Fail,
				Detail: refusals(matrix, row.Call)}})
			continue
		}
		for _, proto := range row.Protocols {
			pr := proto
			if r, _ := matrix.result(row.Call, proto); r.TimedOut {
				record(SmokeCheck{Call: row.Call, Protocol: &pr, Check: Check{Name: SmokeHandshake, Outcome: Fail,
					Detail: "no answer to the upgrade in time, so nothing was checked: " + answer(r)}})
				continue
			}
			if !matrix.Accepted(row.Call, proto) {
				record(SmokeCheck{Call: row.Call, Protocol: &pr, Check: Check{Name: SmokeHandshake, Outcome: Skip,
					Detail: "the runtime does not speak it (" + refusal(matrix, row.Call, proto) + "), so nothing to check"}})
				continue
			}
			isAuto := proto == auto
			for _, check := range s.battery(row.Call, t) {
				if err := ctx.Err(); err != nil {
					return rep, err
				}
				began := time.Now()
				c := check.run(ctx, pr)
				record(SmokeCheck{Call: row.Call, Protocol: &pr, Auto: isAuto, Check: c, Duration: Millis(time.Since(began))})
			}
		}
	}
	return rep, ctx.Err()
}

// notAccepted words a check's upgrade that the handshake probe had seen
// accepted: refused now, or not answered in time.
func notAccepted(hs Handshake, err error) string {
	if hs.TimedOut {
		return "the upgrade got no answer in time although an earlier attempt was accepted: " + errText(err, Result{})
	}
	return "upgrade refused although an earlier attempt was accepted: " + errText(err, Result{Status: hs.Status, Reason: hs.Reason})
}

// result is the probe's result for call and p.
func (r *ProbeReport) result(call Call, p Protocol) (Result, bool) {
	for _, res := range r.Results {
		if res.Call == call && res.Protocol == p {
			return res, true
		}
	}
	return Result{}, false
}

// refusal is the runtime's answer to one refused protocol.
func refusal(rep *ProbeReport, call Call, p Protocol) string {
	for _, r := range rep.Results {
		if r.Call == call && r.Protocol == p {
			return answer(r)
		}
	}
	return "not tried"
}

// answer words a refused result's HTTP status and reason, or its error.
func answer(r Result) string {
	switch {
	case r.Status != 0:
		why := firstLine(r.Reason)
		if strings.HasPrefix(why, fmt.Sprint(r.Status)) {
			return "HTTP " + why
		}
		return strings.TrimSpace(fmt.Sprintf("HTTP %d %s", r.Status, why))
	case r.Error != "":
		return firstLine(r.Error)
	}
	return "accepted, but not a step of the auto order"
}

// refusals describes why nothing was accepted for call, grouping the
// protocols that got the same answer.
func refusals(rep *ProbeReport, call Call) string {
	var order []string
	groups := map[string][]string{}
	for _, r := range rep.Results {
		if r.Call != call {
			continue
		}
		why := answer(r)
		if _, ok := groups[why]; !ok {
			order = append(order, why)
		}
		groups[why] = append(groups[why], r.String())
	}
	var parts []string
	for _, why := range order {
		parts = append(parts, fmt.Sprintf("%s: %s", strings.Join(groups[why], ", "), why))
	}
	return fmt.Sprintf("the runtime accepted no protocol crisp's auto order can use for %s; %s", call, strings.Join(parts, "; "))
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

type smokeCase struct {
	name string
	run  func(ctx context.Context, p Protocol) Check
}

func (s *Smoker) battery(call Call, t Target) []smokeCase {
	exec := func(name string, f func(ctx context.Context, p Protocol, caps Capabilities) Check) smokeCase {
		return smokeCase{name, func(ctx context.Context, p Protocol) Check {
			ctx, cancel := context.WithTimeout(ctx, s.timeout())
			defer cancel()
			c := f(ctx, p, capabilities(CallExec, p))
			c.Name = name
			return c
		}}
	}
	switch call {
	case CallExec:
		return []smokeCase{
			exec(SmokeEcho, func(ctx context.Context, p Protocol, caps Capabilities) Check { return s.echo(ctx, t, p, caps) }),
			exec(SmokeSeparate, func(ctx context.Context, p Protocol, _ Capabilities) Check { return s.separate(ctx, t, p) }),
			exec(SmokeExitCode, func(ctx context.Context, p Protocol, caps Capabilities) Check { return s.exitCode(ctx, t, p, caps) }),
			exec(SmokeStdinEOF, func(ctx context.Context, p Protocol, caps Capabilities) Check { return s.stdinEOF(ctx, t, p, caps) }),
			exec(SmokeIntegrity, func(ctx context.Context, p Protocol, _ Capabilities) Check { return s.integrity(ctx, t, p) }),
			exec(SmokeTTY, func(ctx context.Context, p Protocol, caps Capabilities) Check { return s.tty(ctx, t, p, caps) }),
		}
	case CallAttach:
		return []smokeCase{exec(SmokeAttach, func(ctx context.Context, p Protocol, _ Capabilities) Check { return s.attach(ctx, t, p) })}
	case CallPortForward:
		return []smokeCase{{SmokeForward, func(ctx context.Context, p Protocol) Check {
			ctx, cancel := context.WithTimeout(ctx, s.timeout())
			defer cancel()
			c := s.forward(ctx, t, p)
			c.Name = SmokeForward
			return c
		}}}
	}
	return nil
}

// execRun makes a fresh exec URL and runs one session on it. The check is
// non-nil (failed) when no session ran: the RPC failed, or the upgrade was
// refused although the handshake probe accepted it.
func (s *Smoker) execRun(ctx context.Context, t Target, p Protocol, req *runtimeapi.ExecRequest, sess Session) (*Check, error) {
	req.ContainerId = t.ContainerID
	url, err := s.URLs.Exec(ctx, req)
	if err != nil {
		return &Check{Outcome: Fail, Detail: err.Error()}, err
	}
	hs, err := s.Streamer.Stream(ctx, url, p, sess)
	if !hs.Accepted {
		return &Check{Outcome: Fail, Detail: notAccepted(hs, err)}, err
	}
	return nil, err
}

func (s *Smoker) echo(ctx context.Context, t Target, p Protocol, caps Capabilities) Check {
	payload := "crisp smoke echo\n"
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := newWatchWriter(payload, cancel)
	var errOut bytes.Buffer
	bad, err := s.execRun(ctx, t, p, &runtimeapi.ExecRequest{Cmd: []string{"cat"}, Stdin: true, Stdout: true, Stderr: true},
		Session{Stdin: strings.NewReader(payload), Stdout: out, Stderr: &errOut, CloseStdin: caps.StdinEOF})
	if bad != nil {
		return *bad
	}
	if got := out.String(); got != payload {
		return Check{Outcome: Fail, Detail: fmt.Sprintf("`cat` echoed %q, want %q (stderr %q, error %v)", clip(got), payload, clip(errOut.String()), err)}
	}
	return Check{Outcome: Pass, Detail: fmt.Sprintf("`cat` echoed %d bytes", len(payload))}
}

func (s *Smoker) separate(ctx context.Context, t Target, p Protocol) Check {
	var out, errOut bytes.Buffer
	bad, err := s.execRun(ctx, t, p, &runtimeapi.ExecRequest{Cmd: []string{"sh", "-c", "echo to-stdout; echo to-stderr >&2"}, Stdout: true, Stderr: true},
		Session{Stdout: &out, Stderr: &errOut})
	if bad != nil {
		return *bad
	}
	if out.String() != "to-stdout\n" || errOut.String() != "to-stderr\n" {
		return Check{Outcome: Fail, Detail: fmt.Sprintf("stdout %q, stderr %q; want \"to-stdout\\n\" and \"to-stderr\\n\" (error %v)", clip(out.String()), clip(errOut.String()), err)}
	}
	return Check{Outcome: Pass, Detail: "stdout and stderr arrived apart"}
}

func (s *Smoker) exitCode(ctx context.Context, t Target, p Protocol, caps Capabilities) Check {
	var errOut bytes.Buffer
	bad, err := s.execRun(ctx, t, p, &runtimeapi.ExecRequest{Cmd: []string{"sh", "-c", "exit 7"}, Stdout: true, Stderr: true},
		Session{Stdout: io.Discard, Stderr: &errOut})
	if bad != nil {
		return *bad
	}
	code, ok := exitStatus(err)
	switch {
	case ok && code == 7:
		return Check{Outcome: Pass, Detail: "`sh -c 'exit 7'` exited 7"}
	case !caps.ExitCode && err != nil && strings.Contains(err.Error(), "7"):
		return Check{Outcome: Pass, Detail: fmt.Sprintf("error text states the code: %v", err)}
	case !caps.ExitCode && err != nil:
		return Check{Outcome: Skip, Detail: missing("exit-code", p) + fmt.Sprintf(" (text: %v)", err)}
	case ok && code == 0 && p.Name == transport.ExecProtocolV1:
		// crisp waits for v1's error text (internal/transport statuswatch),
		// so an empty one is the server's: cri-streaming's v1 handler (what
		// containerd and CRI-O embed) resets the error stream before the
		// command runs, as 1.0 kubelets did.
		return Check{Outcome: Fail, Detail: fmt.Sprintf("`sh -c 'exit 7'` looked like success: %s carries the exit status only as an error text, and the runtime sent none (servers built on cri-streaming reset v1's error stream before the command starts)", p)}
	case ok:
		return Check{Outcome: Fail, Detail: fmt.Sprintf("`sh -c 'exit 7'` reported exit %d, want 7", code)}
	}
	return Check{Outcome: Fail, Detail: fmt.Sprintf("`sh -c 'exit 7'`: no exit status, the stream failed: %v", err)}
}

func (s *Smoker) stdinEOF(ctx context.Context, t Target, p Protocol, caps Capabilities) Check {
	if !caps.StdinEOF {
		return Check{Outcome: Skip, Detail: missing("stdin-eof", p)}
	}
	var out, errOut bytes.Buffer
	bad, err := s.execRun(ctx, t, p, &runtimeapi.ExecRequest{Cmd: []string{"wc", "-l"}, Stdin: true, Stdout: true, Stderr: true},
		Session{Stdin: strings.NewReader("a\nb\n"), Stdout: &out, Stderr: &errOut, CloseStdin: true})
	if bad != nil {
		return *bad
	}
	if ctx.Err() != nil {
		return Check{Outcome: Fail, Detail: fmt.Sprintf("`wc -l` did not end within %s after stdin was closed: the server ignored the end of stdin", s.timeout())}
	}
	if got := strings.TrimSpace(out.String()); got != "2" || err != nil {
		return Check{Outcome: Fail, Detail: fmt.Sprintf("`wc -l` of two lines printed %q, want 2 (error %v, stderr %q)", clip(got), err, clip(errOut.String()))}
	}
	return Check{Outcome: Pass, Detail: "`wc -l` saw stdin end and printed 2"}
}

func (s *Smoker) integrity(ctx context.Context, t Target, p Protocol) Check {
	data := make([]byte, IntegritySize)
	if _, err := rand.Read(data); err != nil {
		return Check{Outcome: Fail, Detail: err.Error()}
	}
	want := sha256.Sum256(data)
	h := sha256.New()
	counter := &countWriter{w: h}
	var errOut bytes.Buffer
	// head -c ends by itself after the last byte, so protocols that cannot
	// close stdin carry the check too.
	bad, err := s.execRun(ctx, t, p, &runtimeapi.ExecRequest{Cmd: []string{"head", "-c", fmt.Sprint(IntegritySize)}, Stdin: true, Stdout: true, Stderr: true},
		Session{Stdin: bytes.NewReader(data), Stdout: counter, Stderr: &errOut, CloseStdin: capabilities(CallExec, p).StdinEOF})
	if bad != nil {
		return *bad
	}
	var got [sha256.Size]byte
	copy(got[:], h.Sum(nil))
	if counter.n != IntegritySize || got != want {
		return Check{Outcome: Fail, Detail: fmt.Sprintf("sent 16 MiB through `head -c %d`, got back %d bytes, sha256 match %t (error %v, stderr %q)", IntegritySize, counter.n, got == want, err, clip(errOut.String()))}
	}
	if code, ok := exitStatus(err); !ok || code != 0 {
		if capabilities(CallExec, p).ExitCode {
			return Check{Outcome: Fail, Detail: fmt.Sprintf("the 16 MiB arrived intact but the command ended with %v", err)}
		}
	}
	return Check{Outcome: Pass, Detail: "16 MiB in and out, sha256 matches"}
}

func (s *Smoker) tty(ctx context.Context, t Target, p Protocol, caps Capabilities) Check {
	if !caps.Resize {
		return Check{Outcome: Skip, Detail: missing("resize", p)}
	}
	tc := newTTYCheck()
	bad, err := s.execRun(ctx, t, p, &runtimeapi.ExecRequest{Cmd: tc.command(), Tty: true, Stdout: true}, tc.session())
	if bad != nil {
		return *bad
	}
	outcome, detail := tc.verdict(p, err)
	return Check{Outcome: outcome, Detail: detail}
}

func (s *Smoker) attach(ctx context.Context, t Target, p Protocol) Check {
	window := 3 * time.Second
	wctx, cancel := context.WithTimeout(ctx, window)
	defer cancel()
	out := newWatchWriter("", nil)
	out.anyOutput = cancel
	url, err := s.URLs.Attach(wctx, &runtimeapi.AttachRequest{ContainerId: t.ContainerID, Stdout: true, Stderr: true})
	if err != nil {
		return Check{Outcome: Fail, Detail: err.Error()}
	}
	hs, err := s.Streamer.Stream(wctx, url, p, Session{Stdout: out, Stderr: out})
	if !hs.Accepted {
		return Check{Outcome: Fail, Detail: notAccepted(hs, err)}
	}
	switch got := out.String(); {
	case got != "":
		return Check{Outcome: Pass, Detail: fmt.Sprintf("read %d bytes from the main process", len(got))}
	case ctx.Err() == nil && wctx.Err() != nil:
		return Check{Outcome: Skip, Detail: fmt.Sprintf("the main process printed nothing within %s; run smoke on a container that prints (or use --image)", window)}
	}
	return Check{Outcome: Fail, Detail: fmt.Sprintf("the attach stream ended without output: %v", err)}
}

func (s *Smoker) forward(ctx context.Context, t Target, p Protocol) Check {
	if t.Port == 0 {
		return Check{Outcome: Skip, Detail: "no --port given (it must reach a TCP echo server in the pod)"}
	}
	url, err := s.URLs.PortForward(ctx, &runtimeapi.PortForwardRequest{PodSandboxId: t.PodID, Port: []int32{t.Port}})
	if err != nil {
		return Check{Outcome: Fail, Detail: err.Error()}
	}
	hs, conn, err := s.Streamer.Forward(ctx, url, p, t.Port)
	if !hs.Accepted {
		return Check{Outcome: Fail, Detail: notAccepted(hs, err)}
	}
	if err != nil || conn == nil {
		return Check{Outcome: Fail, Detail: fmt.Sprintf("could not open a connection to port %d: %v", t.Port, err)}
	}
	payload := make([]byte, 64<<10)
	_, _ = rand.Read(payload)
	got, err := roundTrip(ctx, conn, payload)
	switch {
	case bytes.Equal(got, payload):
		return Check{Outcome: Pass, Detail: fmt.Sprintf("port %d echoed 64 KiB intact", t.Port)}
	case len(got) > 0 && !bytes.Equal(got, payload[:min(len(got), len(payload))]):
		return Check{Outcome: Pass, Detail: fmt.Sprintf("port %d answered %d bytes (not an echo server, so integrity was not checked)", t.Port, len(got))}
	}
	return Check{Outcome: Fail, Detail: fmt.Sprintf("sent 64 KiB to port %d, %d bytes came back: %v", t.Port, len(got), err)}
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	c.n += int64(len(b))
	return c.w.Write(b)
}

// lostTTYHint names the known case of a lost TTY output.
func lostTTYHint(p Protocol) string {
	if p.Transport == transport.WebSocket {
		return " (containerd 1.6 is known to drop the output of a TTY exec without stdin over WebSocket)"
	}
	return ""
}
