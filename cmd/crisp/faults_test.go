package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
)

// runBounded runs crisp and fails the test if it outlives bound (it is
// then killed): the guard that no fault makes crisp hang.
func runBounded(t *testing.T, bound time.Duration, endpoint string, args ...string) (code int, took time.Duration, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	cmd := crispCmd(t, endpoint, args...)
	var errOut strings.Builder
	cmd.Stderr = &errOut
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Kill() }) // the bound; killing an ended process reports nothing useful
	err := cmd.Wait()
	stop()
	took = time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("crisp %s still running after %s (killed)\nstderr: %s", strings.Join(args, " "), bound, errOut.String())
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatal(err)
	}
	return code, took, errOut.String()
}

// Every mock fault against exec, attach, probe and smoke: the documented
// exit status, and never a hang past the bounds the flags set.
func TestFaultsNeverHang(t *testing.T) {
	if testing.Short() {
		t.Skip("runs crisp against a faulty mock many times")
	}
	faults := []struct {
		fault string
		// exit statuses: exec (of `head -c 100000 /dev/zero`), attach, probe, smoke
		exec, attach, probe, smoke int
		// execMayMeetDeadServer: the kill is timed from the mock's start, so on
		// a loaded machine exec may connect after it, or be cut by it (125,
		// the documented failure), instead of ending before it (0); all are
		// bounded.
		execMayMeetDeadServer bool
		// probeAttempt is probe's --attempt-timeout (1s when empty).
		probeAttempt string
	}{
		{"refuse-upgrade", 125, 125, 0, 1, false, ""},
		// Every upgrade outlasts every bound (1 s, probe's 0.5 s attempts).
		{"delay=2s", 125, 125, 1, 1, false, "500ms"},
		// The ticker prints 5 bytes every 0.2 s: the cut comes at the third tick.
		{"drop-after=10", 125, 125, 0, 1, false, ""},
		// exec's command ends before the kill; the rest meet a dead server.
		{"kill-stream-server-after=300ms", 0, 125, 1, 1, true, ""},
	}
	// Each run's bound: what its timeouts allow, with room; probe makes
	// 24 attempts of up to --attempt-timeout each.
	const bound, probeBound = 15 * time.Second, 40 * time.Second
	for _, tt := range faults {
		t.Run(tt.fault, func(t *testing.T) {
			fault, err := streamserver.ParseFault(tt.fault)
			if err != nil {
				t.Fatal(err)
			}
			env, ctr := tickerContainer(t, mockruntime.Config{Profile: streamserver.ProfileFull, Faults: []streamserver.Fault{fault}})
			attempt := cmp.Or(tt.probeAttempt, "1s")
			for _, c := range []struct {
				name string
				want int
				args []string
			}{
				{"exec", tt.exec, []string{"--request-timeout", "1s", "exec", ctr, "--", "head", "-c", "100000", "/dev/zero"}},
				{"attach", tt.attach, []string{"--request-timeout", "1s", "attach", ctr}},
				{"probe", tt.probe, []string{"--request-timeout", "1s", "probe", ctr, "--attempt-timeout", attempt}},
				{"smoke", tt.smoke, []string{"--request-timeout", "1s", "smoke", ctr, "--timeout", "4s"}},
			} {
				limit := bound
				if c.name == "probe" {
					limit = probeBound
				}
				code, took, stderr := runBounded(t, limit, env.Endpoint, c.args...)
				t.Logf("%s: exit %d in %s", c.name, code, took.Round(time.Millisecond))
				if c.name == "exec" && tt.execMayMeetDeadServer && code == 125 &&
					(strings.Contains(stderr, "connection refused") || strings.Contains(stderr, "did the runtime or its streaming server stop?")) {
					continue
				}
				if code != c.want {
					t.Errorf("%s under %s exited %d, want %d\nstderr: %.600s", c.name, tt.fault, code, c.want, stderr)
				}
			}
		})
	}
}

// A signal while an upgrade is pending (the runtime delays every upgrade
// by 30 s; the request timeout is 60 s) ends exec, attach, probe and smoke
// in well under a second with 128+N.
func TestSignalDuringPendingUpgrade(t *testing.T) {
	if testing.Short() {
		t.Skip("runs crisp against a delaying mock")
	}
	fault, err := streamserver.ParseFault("delay=30s")
	if err != nil {
		t.Fatal(err)
	}
	env, ctr := tickerContainer(t, mockruntime.Config{Profile: streamserver.ProfileFull, Faults: []streamserver.Fault{fault}})
	for _, c := range []struct {
		name  string
		args  []string
		ready string // a stderr line that says the upgrade is pending
		sig   syscall.Signal
	}{
		{"exec", []string{"-vv", "--request-timeout", "60s", "exec", ctr, "--", "true"}, "exec: offering", syscall.SIGINT},
		{"attach", []string{"-vv", "--request-timeout", "60s", "attach", ctr}, "attach: offering", syscall.SIGTERM},
		{"probe", []string{"--request-timeout", "60s", "probe", ctr}, "still waiting", syscall.SIGINT},
		{"smoke", []string{"--request-timeout", "60s", "smoke", ctr}, "still waiting", syscall.SIGHUP},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := crispCmd(t, env.Endpoint, c.args...)
			errPipe, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill() }() // a no-op once it exited
			ready := make(chan struct{})
			go func() {
				sc := bufio.NewScanner(errPipe)
				seen := false
				for sc.Scan() {
					if !seen && strings.Contains(sc.Text(), c.ready) {
						seen = true
						close(ready)
					}
				}
			}()
			select {
			case <-ready:
			case <-time.After(20 * time.Second):
				t.Fatalf("no %q on stderr in 20s", c.ready)
			}
			sent := time.Now()
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				took := time.Since(sent)
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 128+int(c.sig) {
					t.Errorf("exit %v, want %d", err, 128+int(c.sig))
				}
				if took > time.Second {
					t.Errorf("exited %s after the signal, want well under a second", took)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("still running 10s after %s", c.sig)
			}
		})
	}
}
