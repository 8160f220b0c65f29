package containerd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// commandTimeout bounds one crisp or crictl run of the helpers: generous, as
// the machine may be busy (smoke takes ~15 s idle, a minute when loaded).
const commandTimeout = 3 * time.Minute

// Result is what a finished command did. ExitCode is -1 when the command
// could not run or was killed; Err is then set.
type Result struct {
	Stdout, Stderr string
	ExitCode       int
	Err            error
}

func (r Result) String() string {
	return fmt.Sprintf("exit %d (err %v)\nstdout:\n%s\nstderr:\n%s", r.ExitCode, r.Err, truncate(r.Stdout), truncate(r.Stderr))
}

// truncate keeps the start and the end of long output (where tools print
// what they were doing, and their verdict).
func truncate(s string) string {
	if len(s) > 6000 {
		return s[:2000] + "\n...\n" + s[len(s)-4000:]
	}
	return s
}

// crispBinary is ./cmd/crisp, built once per test binary.
func crispBinary(t testing.TB) string {
	t.Helper()
	return suite.crisp.Path(t)
}

// crispCmd is crisp with args against the harness (CONTAINER_RUNTIME_ENDPOINT
// set, no crictl config), for tests that wire stdin/stdout themselves. Each
// command gets a cache folder of its own, so the protocol cache carries
// nothing from one test to the next (tests assert what negotiation does).
func (h *Harness) crispCmd(t testing.TB, ctx context.Context, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, crispBinary(t), args...)
	cmd.Env = append(cleanEnv(), "CONTAINER_RUNTIME_ENDPOINT="+h.Endpoint, "XDG_CACHE_HOME="+t.TempDir())
	// Only a pipe still open after crisp exited waits this long; on a loaded
	// machine the test's own copy of 64 MiB of stdout once needed more than 5 s.
	cmd.WaitDelay = 30 * time.Second
	return cmd
}

// crisp runs crisp with args against the harness and returns what it did
// (commandTimeout at most).
func (h *Harness) crisp(t testing.TB, args ...string) Result {
	t.Helper()
	return h.crispStdin(t, nil, args...)
}

// crispStdin is crisp with stdin read from in (closed at its end).
func (h *Harness) crispStdin(t testing.TB, in io.Reader, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	return run(h.crispCmd(t, ctx, args...), in)
}

// crictlCmd is crictl v1.37.0 with args against the harness.
func (h *Harness) crictlCmd(t testing.TB, ctx context.Context, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, suite.crictl, append([]string{"--runtime-endpoint", h.Endpoint, "--image-endpoint", h.Endpoint}, args...)...)
	cmd.Env = append(cleanEnv(), "CRI_CONFIG_FILE="+crictlConfig(t))
	cmd.WaitDelay = 5 * time.Second
	// crictl attach ignores SIGTERM: kill it.
	cmd.Cancel = func() error { return cmd.Process.Kill() }
	return cmd
}

// crictl runs crictl with args against the harness (commandTimeout at most).
func (h *Harness) crictl(t testing.TB, args ...string) Result {
	t.Helper()
	return h.crictlStdin(t, nil, args...)
}

// crictlStdin is crictl with stdin read from in.
func (h *Harness) crictlStdin(t testing.TB, in io.Reader, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	return run(h.crictlCmd(t, ctx, args...), in)
}

// crictlConfig is the crictl config file of every crictl run here: without
// one crictl warns that /etc/crictl.yaml is missing. It raises crictl's
// 2-second default RPC timeout, which a busy machine overruns (StartContainer
// with two containerds and other test packages at work).
func crictlConfig(t testing.TB) string {
	t.Helper()
	suite.crictlConfigOnce.Do(func() {
		suite.crictlConfig = filepath.Join(suite.binDir, "crictl.yaml")
		suite.crictlConfigErr = os.WriteFile(suite.crictlConfig, []byte("timeout: 60\n"), 0o644)
	})
	if suite.crictlConfigErr != nil {
		t.Fatal(suite.crictlConfigErr)
	}
	return suite.crictlConfig
}

// run runs cmd to its end with stdin from in (nil: no stdin).
func run(cmd *exec.Cmd, in io.Reader) Result {
	// stdout goes to a file, not through a pipe this race-instrumented
	// process copies: 64 MiB of crisp exec's output took 14 s into a
	// bytes.Buffer under -race and 1.7 s into a file (4.3 s without -race),
	// and the 64 MiB tests were half of this package's time.
	out, err := os.CreateTemp("", "crisp-e2e-stdout-")
	if err != nil {
		return Result{ExitCode: -1, Err: err}
	}
	defer func() { _ = out.Close(); _ = os.Remove(out.Name()) }() // a temporary file: nothing to lose
	var stderr bytes.Buffer
	cmd.Stdin = in
	cmd.Stdout = out
	cmd.Stderr = &stderr
	err = cmd.Run()
	stdout, readErr := os.ReadFile(out.Name())
	r := Result{Stdout: string(stdout), Stderr: stderr.String(), ExitCode: cmd.ProcessState.ExitCode()}
	var exitErr *exec.ExitError
	if err != nil && (!errors.As(err, &exitErr) || r.ExitCode < 0) {
		r.Err = err
	}
	if readErr != nil && r.Err == nil {
		r.Err = readErr
	}
	return r
}

// cmdWithTimeout is name with args, killed after d or at the end of the test.
func cmdWithTimeout(t testing.TB, d time.Duration, name string, args ...string) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = cleanEnv()
	cmd.WaitDelay = 5 * time.Second
	return cmd
}
