package crossval

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// TestMockCrictlShapes runs crisp and crictl on the same objects of the
// mock runtime and requires every JSON (and YAML) output of crisp to have
// crictl's paths and types.
func TestMockCrictlShapes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds crisp and runs crictl: not in -short")
	}
	env := setup(t)
	o := env.objects(t)
	total, compared := 0, 0
	for _, c := range Cases(o) {
		t.Run(c.Name, func(t *testing.T) {
			want := env.crictl(t, c.Args...)
			got := env.crisp(t, c.Args...)
			r, err := c.Check(want, got)
			if err != nil {
				t.Fatalf("%v\ncrictl:\n%s\ncrisp:\n%s", err, want, got)
			}
			// Something real is compared: crictl's output holds the
			// objects, not an empty list.
			total += r.Paths
			compared++
			if r.Paths < 5 {
				t.Errorf("only %d paths compared: crictl printed\n%s", r.Paths, want)
			}
			if len(r.Differences) > 0 {
				t.Errorf("crisp %s: %d paths differ from crictl's (want crictl's types):\n%s\ncrictl:\n%s\ncrisp:\n%s",
					strings.Join(c.Args, " "), len(r.Differences), r, want, got)
			}
		})
	}
	t.Logf("%d outputs compared with crictl's, %d paths", compared, total)
}

// crisp is ./cmd/crisp, built once for the package's tests.
var crisp = testkit.GoBinary{Pkg: "./cmd/crisp"}

func TestMain(m *testing.M) {
	code := m.Run()
	crisp.Remove()
	os.Exit(code)
}

// mockEnv is a mock runtime started with the crisp binary, and crictl.
type mockEnv struct {
	crispBin, crictlBin string
	endpoint            string
	crictlConfig        string
	dir                 string
}

func setup(t *testing.T) *mockEnv {
	t.Helper()
	repo := repoRoot(t)
	e := &mockEnv{crictlBin: os.Getenv("CRICTL")}
	if e.crictlBin == "" {
		e.crictlBin = filepath.Join(repo, ".tools", "bin", "crictl")
	}
	if _, err := os.Stat(e.crictlBin); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("crictl is needed under CI=true: %v", err)
		}
		t.Skipf("crictl is not built (%v): run `make deps`", err)
	}
	e.crispBin = crisp.Path(t)
	bin := t.TempDir()
	e.crictlConfig = filepath.Join(bin, "crictl.yaml")
	if err := os.WriteFile(e.crictlConfig, []byte("timeout: 60\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := testkit.SocketDir(t)
	e.dir = dir
	e.endpoint = "unix://" + filepath.Join(dir, "cri.sock")
	e.startMock(t)
	return e
}

// startMock runs `crisp mock-runtime` until the end of the test and waits
// for it to serve.
func (e *mockEnv) startMock(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, e.crispBin, "mock-runtime", "--listen", e.endpoint)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	// It says where it serves on stderr; the rest of its log is kept for
	// a failure's message.
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log lockedBuffer
	served := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			log.WriteLine(sc.Text())
			if strings.Contains(sc.Text(), "serving CRI") {
				close(served)
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		if err := cmd.Wait(); err != nil && !errors.Is(ctx.Err(), context.Canceled) {
			t.Errorf("mock runtime: %v\n%s", err, log.String())
		}
	})
	select {
	case <-served:
	case <-time.After(time.Minute):
		t.Fatalf("mock runtime did not serve within a minute:\n%s", log.String())
	}
}

// lockedBuffer is the mock's log, written by one goroutine and read by the
// test.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) WriteLine(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s + "\n")
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// objects makes a pod with a running container and an exited one, with
// crictl, and returns what the cases inspect.
func (e *mockEnv) objects(t *testing.T) Objects {
	t.Helper()
	const image = "registry.k8s.io/e2e-test-images/busybox:1.29-2"
	pod := e.write(t, "pod.json", fmt.Sprintf(`{"metadata": {"name": "cv", "namespace": "crossval", "uid": "cv-uid"},
  "labels": {"app": "cv"}, "annotations": {"a": "b"}, "log_directory": %q}`, e.dir))
	podID := strings.TrimSpace(string(e.crictl(t, "runp", pod)))
	var sleeper string
	for name, cmd := range map[string]string{"sleeper": `["sleep", "600"]`, "done": `["true"]`} {
		ctr := e.write(t, name+".json", fmt.Sprintf(`{"metadata": {"name": %q}, "image": {"image": %q},
  "command": %s, "labels": {"role": %q}, "envs": [{"key": "K", "value": "V"}], "log_path": %q}`, name, image, cmd, name, name+".log"))
		id := strings.TrimSpace(string(e.crictl(t, "create", podID, ctr, pod)))
		e.crictl(t, "start", id)
		if name == "sleeper" {
			sleeper = id
		}
	}
	return Objects{Container: sleeper, Pod: podID, Image: image}
}

func (e *mockEnv) write(t *testing.T, name, data string) string {
	t.Helper()
	path := filepath.Join(e.dir, name)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// crictl runs crictl with args against the mock and returns its stdout; a
// failure fails the test.
func (e *mockEnv) crictl(t *testing.T, args ...string) []byte {
	t.Helper()
	return e.run(t, e.crictlBin, append([]string{"-r", e.endpoint, "-i", e.endpoint}, args...),
		"CRI_CONFIG_FILE="+e.crictlConfig)
}

// crisp runs crisp with args against the mock and returns its stdout.
func (e *mockEnv) crisp(t *testing.T, args ...string) []byte {
	t.Helper()
	return e.run(t, e.crispBin, args, "CONTAINER_RUNTIME_ENDPOINT="+e.endpoint)
}

func (e *mockEnv) run(t *testing.T, bin string, args []string, env ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(cleanEnv(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.Bytes()
}

// cleanEnv is the test's environment without the CRI settings a shell may
// carry.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "CONTAINER_RUNTIME_ENDPOINT", "IMAGE_SERVICE_ENDPOINT", "CRI_CONFIG_FILE":
			continue
		}
		env = append(env, kv)
	}
	return env
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := testkit.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
