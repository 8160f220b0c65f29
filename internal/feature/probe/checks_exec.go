package probe

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/transport"
)

// The exec checks of the registry (checks.go).

// probeExitCode judges the handshake's own session: `true`, or the user's
// command.
func probeExitCode(_ context.Context, a *Attempt) Check {
	f := a.First
	c := exitCodeCheck(a.Protocol, a.Caps, f.Cmd, f.Err, f.Stderr, !f.UserCmd)
	if f.UserCmd {
		// The user's command: we cannot know what to expect, so say what it printed.
		c.Detail += fmt.Sprintf("; it printed %d bytes on stdout, %d on stderr", len(f.Stdout), len(f.Stderr))
	}
	return c
}

func exitCodeCheck(proto Protocol, caps Capabilities, cmd []string, err error, stderr string, expectZero bool) Check {
	c := Check{Name: CheckExitCode}
	code, ok := exitStatus(err)
	switch {
	case ok && expectZero && code != 0:
		c.Outcome, c.Detail = Fail, fmt.Sprintf("%q exited %d, want 0 (stderr %q)", strings.Join(cmd, " "), code, clip(stderr))
	case ok:
		c.Outcome, c.Detail = Pass, fmt.Sprintf("%q exited %d", strings.Join(cmd, " "), code)
		if !caps.ExitCode {
			c.Detail += " (no error text, so success; " + missing(string(NeedExitCode), proto) + ")"
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

// catSession is what probe's `cat` left for the stdin-eof check: its
// error, and whether it outlived its timeout.
type catSession struct {
	err     error
	expired bool
}

// probeCatOutput runs `cat` with a payload on stdin: the output must echo
// it. Where the protocol can close stdin it is closed, and the session is
// kept for the stdin-eof check (the command must end by itself).
func probeCatOutput(ctx context.Context, a *Attempt) Check {
	res := Result{Call: CallExec}
	ctx1, cancel := context.WithTimeout(ctx, a.Timeout)
	defer cancel()
	out := newWatchWriter(probePayload, cancel)
	var errOut bytes.Buffer
	rpc := func(ctx context.Context) (string, error) {
		return a.urls.Exec(ctx, &runtimeapi.ExecRequest{ContainerId: a.Target.ContainerID, Cmd: []string{"cat"}, Stdin: true, Stdout: true, Stderr: true})
	}
	s := Session{Stdin: strings.NewReader(probePayload), Stdout: out, Stderr: &errOut, CloseStdin: a.Caps.StdinEOF}
	if a.Caps.StdinEOF {
		// The command must end by itself once stdin closes.
		out = newWatchWriter("", nil)
		s.Stdout = out
	}
	ok, err := a.attempt(ctx1, &res, rpc, s)
	if !ok {
		return Check{Outcome: Fail, Detail: "a second URL for `cat` was refused: " + errText(err, res)}
	}
	a.cat = &catSession{err: err, expired: ctx1.Err() != nil && ctx.Err() == nil}
	got := out.String()
	if got != probePayload {
		return Check{Outcome: Fail, Detail: fmt.Sprintf("`cat` echoed %q, want %q (stderr %q, error %v)", clip(got), probePayload, clip(errOut.String()), err)}
	}
	return Check{Outcome: Pass, Detail: fmt.Sprintf("`cat` echoed %d bytes", len(got))}
}

// probeCatEOF judges the output check's `cat`: closing stdin must end it.
func probeCatEOF(_ context.Context, a *Attempt) Check {
	if a.cat.expired {
		return Check{Outcome: Fail, Detail: fmt.Sprintf("`cat` did not end within %s after stdin was closed", a.Timeout)}
	}
	if code, ok := exitStatus(a.cat.err); ok && code == 0 {
		return Check{Outcome: Pass, Detail: "`cat` ended when stdin was closed"}
	}
	return Check{Outcome: Fail, Detail: fmt.Sprintf("`cat` ended with %v after stdin was closed", a.cat.err)}
}

// probeResize runs the TTY exchange (see ttyCheck) on a fresh URL.
func probeResize(ctx context.Context, a *Attempt) Check {
	res := Result{Call: CallExec}
	ctx1, cancel := context.WithTimeout(ctx, a.Timeout)
	defer cancel()
	tc := newTTYCheck()
	rpc := func(ctx context.Context) (string, error) {
		return a.urls.Exec(ctx, &runtimeapi.ExecRequest{ContainerId: a.Target.ContainerID, Cmd: tc.command(), Tty: true, Stdout: true})
	}
	ok, err := a.attempt(ctx1, &res, rpc, tc.session())
	if !ok {
		return Check{Outcome: Fail, Detail: "a URL for the TTY check was refused: " + errText(err, res)}
	}
	outcome, detail := tc.verdict(a.Protocol, err)
	return Check{Outcome: outcome, Detail: detail}
}

// execRun makes a fresh exec URL and runs one session on it (smoke's
// checks). The check is non-nil (failed) when no session ran: the RPC
// failed, or the upgrade was refused although the handshake probe
// accepted it.
func (a *Attempt) execRun(ctx context.Context, req *runtimeapi.ExecRequest, sess Session) (*Check, error) {
	req.ContainerId = a.Target.ContainerID
	o := a.open(ctx, func(ctx context.Context) (string, error) { return a.urls.Exec(ctx, req) }, sess)
	if o.RPCErr != nil {
		return &Check{Outcome: Fail, Detail: o.RPCErr.Error()}, o.RPCErr
	}
	if !o.Accepted {
		return &Check{Outcome: Fail, Detail: notAccepted(o.Handshake, o.Err)}, o.Err
	}
	return nil, o.Err
}

func smokeEcho(ctx context.Context, a *Attempt) Check {
	payload := "crisp smoke echo\n"
	ctx, cancel := context.WithTimeout(ctx, a.Timeout)
	defer cancel()
	out := newWatchWriter(payload, cancel)
	var errOut bytes.Buffer
	bad, err := a.execRun(ctx, &runtimeapi.ExecRequest{Cmd: []string{"cat"}, Stdin: true, Stdout: true, Stderr: true},
		Session{Stdin: strings.NewReader(payload), Stdout: out, Stderr: &errOut, CloseStdin: a.Caps.StdinEOF})
	if bad != nil {
		return *bad
	}
	if got := out.String(); got != payload {
		return Check{Outcome: Fail, Detail: fmt.Sprintf("`cat` echoed %q, want %q (stderr %q, error %v)", clip(got), payload, clip(errOut.String()), err)}
	}
	return Check{Outcome: Pass, Detail: fmt.Sprintf("`cat` echoed %d bytes", len(payload))}
}

func smokeSeparate(ctx context.Context, a *Attempt) Check {
	ctx, cancel := context.WithTimeout(ctx, a.Timeout)
	defer cancel()
	var out, errOut bytes.Buffer
	bad, err := a.execRun(ctx, &runtimeapi.ExecRequest{Cmd: []string{"sh", "-c", "echo to-stdout; echo to-stderr >&2"}, Stdout: true, Stderr: true},
		Session{Stdout: &out, Stderr: &errOut})
	if bad != nil {
		return *bad
	}
	if out.String() != "to-stdout\n" || errOut.String() != "to-stderr\n" {
		return Check{Outcome: Fail, Detail: fmt.Sprintf("stdout %q, stderr %q; want \"to-stdout\\n\" and \"to-stderr\\n\" (error %v)", clip(out.String()), clip(errOut.String()), err)}
	}
	return Check{Outcome: Pass, Detail: "stdout and stderr arrived apart"}
}

func smokeExitCode(ctx context.Context, a *Attempt) Check {
	ctx, cancel := context.WithTimeout(ctx, a.Timeout)
	defer cancel()
	p := a.Protocol
	var errOut bytes.Buffer
	bad, err := a.execRun(ctx, &runtimeapi.ExecRequest{Cmd: []string{"sh", "-c", "exit 7"}, Stdout: true, Stderr: true},
		Session{Stdout: io.Discard, Stderr: &errOut})
	if bad != nil {
		return *bad
	}
	code, ok := exitStatus(err)
	switch {
	case ok && code == 7:
		return Check{Outcome: Pass, Detail: "`sh -c 'exit 7'` exited 7"}
	case !a.Caps.ExitCode && err != nil && strings.Contains(err.Error(), "7"):
		return Check{Outcome: Pass, Detail: fmt.Sprintf("error text states the code: %v", err)}
	case !a.Caps.ExitCode && err != nil:
		return Check{Outcome: Skip, Detail: missing(string(NeedExitCode), p) + fmt.Sprintf(" (text: %v)", err)}
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

func smokeStdinEOF(ctx context.Context, a *Attempt) Check {
	ctx, cancel := context.WithTimeout(ctx, a.Timeout)
	defer cancel()
	var out, errOut bytes.Buffer
	bad, err := a.execRun(ctx, &runtimeapi.ExecRequest{Cmd: []string{"wc", "-l"}, Stdin: true, Stdout: true, Stderr: true},
		Session{Stdin: strings.NewReader("a\nb\n"), Stdout: &out, Stderr: &errOut, CloseStdin: true})
	if bad != nil {
		return *bad
	}
	if ctx.Err() != nil {
		return Check{Outcome: Fail, Detail: fmt.Sprintf("`wc -l` did not end within %s after stdin was closed: the server ignored the end of stdin", a.Timeout)}
	}
	if got := strings.TrimSpace(out.String()); got != "2" || err != nil {
		return Check{Outcome: Fail, Detail: fmt.Sprintf("`wc -l` of two lines printed %q, want 2 (error %v, stderr %q)", clip(got), err, clip(errOut.String()))}
	}
	return Check{Outcome: Pass, Detail: "`wc -l` saw stdin end and printed 2"}
}

// integritySize is what smokeIntegrity moves: IntegritySize, less in this
// package's tests (TestMain), which run it on every protocol of every
// profile under the race detector.
var integritySize int64 = IntegritySize

// mib words a size in MiB ("16 MiB"), or KiB below one MiB.
func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d MiB", n>>20)
}

func smokeIntegrity(ctx context.Context, a *Attempt) Check {
	ctx, cancel := context.WithTimeout(ctx, a.Timeout)
	defer cancel()
	data := make([]byte, integritySize)
	if _, err := rand.Read(data); err != nil {
		return Check{Outcome: Fail, Detail: err.Error()}
	}
	want := sha256.Sum256(data)
	h := sha256.New()
	counter := &countWriter{w: h}
	var errOut bytes.Buffer
	// head -c ends by itself after the last byte, so protocols that cannot
	// close stdin carry the check too.
	bad, err := a.execRun(ctx, &runtimeapi.ExecRequest{Cmd: []string{"head", "-c", fmt.Sprint(integritySize)}, Stdin: true, Stdout: true, Stderr: true},
		Session{Stdin: bytes.NewReader(data), Stdout: counter, Stderr: &errOut, CloseStdin: a.Caps.StdinEOF})
	if bad != nil {
		return *bad
	}
	var got [sha256.Size]byte
	copy(got[:], h.Sum(nil))
	if counter.n != integritySize || got != want {
		return Check{Outcome: Fail, Detail: fmt.Sprintf("sent %s through `head -c %d`, got back %d bytes, sha256 match %t (error %v, stderr %q)", mib(integritySize), integritySize, counter.n, got == want, err, clip(errOut.String()))}
	}
	if code, ok := exitStatus(err); !ok || code != 0 {
		if a.Caps.ExitCode {
			return Check{Outcome: Fail, Detail: fmt.Sprintf("the %s arrived intact but the command ended with %v", mib(integritySize), err)}
		}
	}
	return Check{Outcome: Pass, Detail: mib(integritySize) + " in and out, sha256 matches"}
}

func smokeTTY(ctx context.Context, a *Attempt) Check {
	ctx, cancel := context.WithTimeout(ctx, a.Timeout)
	defer cancel()
	tc := newTTYCheck()
	bad, err := a.execRun(ctx, &runtimeapi.ExecRequest{Cmd: tc.command(), Tty: true, Stdout: true}, tc.session())
	if bad != nil {
		return *bad
	}
	outcome, detail := tc.verdict(a.Protocol, err)
	return Check{Outcome: outcome, Detail: detail}
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	c.n += int64(len(b))
	return c.w.Write(b)
}
