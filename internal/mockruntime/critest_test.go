package mockruntime_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"golang.org/x/sys/unix"
)

// critestResult is what one critest run reported.
type critestResult struct {
	passed, failed, skipped int
	refused                 int // failures that are 403 refusals of the upgrade
	out                     []byte
	err                     error
}

// runCritest runs critest's specs matching focus against env.
func runCritest(t *testing.T, bin string, env *mocktest.Env, focus string, flags []string) critestResult {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := append([]string{
		"--runtime-endpoint", env.Endpoint, "--image-endpoint", env.Endpoint,
		"--ginkgo.focus=" + focus, "--ginkgo.no-color",
		// Skipped specs would fill the output with a line each.
		"--ginkgo.silence-skips",
		// critest reads a crictl config: give it one of its own.
		"--config", filepath.Join(env.Dir, "crictl.yaml"),
	}, flags...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = env.Dir
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	res := critestResult{out: out, err: err}
	m := regexp.MustCompile(`(\d+) Passed \| (\d+) Failed \| \d+ Pending \| (\d+) Skipped`).FindSubmatch(out)
	if m == nil {
		res.err = fmt.Errorf("critest printed no summary (%w)", err)
		return res
	}
	res.passed, _ = strconv.Atoi(string(m[1]))
	res.failed, _ = strconv.Atoi(string(m[2]))
	res.skipped, _ = strconv.Atoi(string(m[3]))
	res.refused = len(regexp.MustCompile(`(?m)INFO: Unexpected error occurred: .*bad handshake \(403 Forbidden\)`).FindAll(out, -1))
	return res
}

// TestCritestStreaming runs critest's 5 streaming specs (exec with and
// without a TTY, attach, port-forward, host-network port-forward).
func TestCritestStreaming(t *testing.T) {
	bin := tool(t, "CRITEST", "build it from the module cache with `go test -c ./cmd/critest` in a copy of sigs.k8s.io/cri-tools@v1.37.0 (scripts/deps.sh does)")
	holdCritestLock(t)
	wsFlags := []string{"-websocket-exec", "-websocket-attach", "-websocket-portforward"}
	startEnv := func(t *testing.T, profile streamserver.Profile) *mocktest.Env {
		noChildren(t)
		env := mocktest.Start(t, mockruntime.Config{Profile: profile})
		writeJSON(t, env.Dir, "crictl.yaml", "runtime-endpoint: "+env.Endpoint+"\nimage-endpoint: "+env.Endpoint+"\n")
		return env
	}
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"full/spdy", nil},
		{"full/websocket", wsFlags},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := startEnv(t, streamserver.ProfileFull)
			res := runCritest(t, bin, env, "Streaming", tc.flags)
			if res.err != nil || res.passed != 5 || res.failed != 0 {
				t.Errorf("critest: %d passed, %d failed (%v), want 5 passed:\n%s", res.passed, res.failed, res.err, res.out)
			}
		})
	}

	// containerd and CRI-O refuse v5 and the tunnel, which critest's
	// WebSocket clients offer alone: every spec fails on a 403. The two
	// port-forward specs then wait a minute each for a page that cannot
	// come, so the specs run as three concurrent critest processes (no
	// local port is ever bound: the upgrade fails first).
	t.Run("cri-streaming/websocket", func(t *testing.T) {
		env := startEnv(t, streamserver.ProfileCRIStreaming)
		focuses := []string{
			`Streaming.*should support (exec|attach)`,
			`Streaming.*should support portforward \[Conformance\]`,
			`Streaming.*should support portforward in host network`,
		}
		results := make([]critestResult, len(focuses))
		var wg sync.WaitGroup
		for i, focus := range focuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = runCritest(t, bin, env, focus, wsFlags)
			}()
		}
		wg.Wait()
		var passed, failed, refused int
		var out []byte
		for _, r := range results {
			passed, failed, refused = passed+r.passed, failed+r.failed, refused+r.refused
			out = append(out, r.out...)
		}
		if passed != 0 || failed != 5 || refused != 5 {
			t.Errorf("critest: %d passed, %d failed, %d refused with 403; want all 5 refused with 403:\n%s", passed, failed, refused, out)
		}
	})
}

// critestSkipFile lists the critest specs that cannot pass on host
// processes, each with its reason.
const critestSkipFile = "testdata/critest-skip.txt"

// critestSkips reads critestSkipFile into a --ginkgo.skip expression.
func critestSkips(t *testing.T) (string, int) {
	t.Helper()
	f, err := os.Open(critestSkipFile)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var specs []string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		spec, reason, ok := strings.Cut(line, " | ")
		if !ok || strings.TrimSpace(spec) == "" || strings.TrimSpace(reason) == "" {
			t.Fatalf("%s:%d: want SPEC TEXT | REASON, got %q", critestSkipFile, n, line)
		}
		specs = append(specs, regexp.QuoteMeta(strings.TrimSpace(spec)))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(specs, "|"), len(specs)
}

// directPort80Spec is the one critest spec that dials the pod's port 80
// itself (the pod IP, 127.0.0.1 on the mock) instead of going through
// port-forward or a host-port mapping, which follow the port the mock's web
// server moved to when 80 was taken.
const directPort80Spec = "runtime should support port mapping with only container port"

// port80Skip is a --ginkgo.skip alternative for directPort80Spec when
// another program holds 127.0.0.1:80 without sharing it, or "" when the
// mock's web servers can serve it (they share it with SO_REUSEPORT). Without
// the privilege to bind port 80 it skips the test (fails under CI=true).
func port80Skip(t *testing.T) string {
	t.Helper()
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		}); err != nil {
			return err
		}
		return serr
	}}
	lis, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:80")
	switch {
	case err == nil:
		_ = lis.Close()
		return ""
	case errors.Is(err, syscall.EACCES):
		msg := fmt.Sprintf("critest's nginx container needs 127.0.0.1:80: %v; run as root", err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Logf("127.0.0.1:80 is held by another program (%v): skipping %q, which dials it directly", err, directPort80Spec)
	return "|" + regexp.QuoteMeta(directPort80Spec)
}

// TestCritest runs every critest spec but those of the skip list (kernel
// isolation, and the streaming specs TestCritestStreaming runs) against a
// mock of its own: all must pass.
func TestCritest(t *testing.T) {
	bin := tool(t, "CRITEST", "build it from the module cache with `go test -c ./cmd/critest` in a copy of sigs.k8s.io/cri-tools@v1.37.0 (scripts/deps.sh does)")
	skip, n := critestSkips(t)
	skip += port80Skip(t)
	noChildren(t)
	env := mocktest.Start(t, mockruntime.Config{})
	writeJSON(t, env.Dir, "crictl.yaml", "runtime-endpoint: "+env.Endpoint+"\nimage-endpoint: "+env.Endpoint+"\n")
	holdCritestLock(t)
	start := time.Now()
	res := runCritest(t, bin, env, "", []string{"--ginkgo.skip=" + skip})
	t.Logf("critest: %d passed, %d failed, %d skipped (skip list: %d entries) in %s", res.passed, res.failed, res.skipped, n, time.Since(start).Round(time.Second))
	if res.err != nil || res.failed != 0 || res.passed == 0 {
		t.Errorf("critest: %d passed, %d failed (%v); want every spec outside %s to pass:\n%s", res.passed, res.failed, res.err, critestSkipFile, res.out)
	}
}

// holdCritestLock serialises critest runs on the machine: the specs use
// fixed host ports (12000, 12001, 12003), which the pods of two runs at
// once would fight over.
func holdCritestLock(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(critestLock, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
}

// critestLock is the lock file the containerd suite's critest runs take too.
const critestLock = "/tmp/crisp-critest.lock"
