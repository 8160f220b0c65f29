package containerd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Harness is a running containerd and what containerd-up.sh created in it,
// read from the env file the script writes (CRISP_CTRD_* variables).
type Harness struct {
	Dir              string // the harness folder (config, state, logs, crictl.yaml)
	Endpoint         string // unix:///.../containerd.sock
	Log              string // containerd's log file
	Pod              string // pod with its own network namespace on the bridge
	PodIP            string // its address on the harness's bridge
	PodConfig        string // the pod's config file (crictl create needs it)
	Ctr              string // busybox `sleep` in Pod
	HTTPDCtr         string // busybox httpd in Pod, on HTTPDPort
	HTTPDPort        int
	AttachCtr        string // busybox `sh` in Pod with stdin open, no TTY
	HostnetPod       string // host-network pod
	HostnetCtr       string // busybox `sleep` in HostnetPod
	HostnetPodConfig string
	BusyboxImage     string // local busybox image (default command sh)
	HTTPDImage       string // local image whose command is httpd on port 80
}

// suite is what TestMain set up, read-only once the tests run.
var suite struct {
	repo    string   // repository root
	harness *Harness // nil when unavailable
	reason  string   // why the harness is unavailable
	binDir  string   // temporary folder for the crisp binary
	crictl  string   // crictl binary
	critest string   // critest binary

	buildOnce sync.Once
	crispBin  string
	buildErr  error

	upTook    time.Duration // how long containerd-up.sh took
	resultsMu sync.Mutex
	tracked   map[testing.TB]bool
	results   []testResult // top-level tests, in the order they ended
}

// testResult is one top-level test's outcome, for the summary file.
type testResult struct {
	name, status string
	took         time.Duration
}

// Settings of the harness this package starts: its own folder, bridge and
// /24, so a harness started by hand (`make containerd-up`, /tmp/crisp-ctrd)
// and this one do not meet.
const (
	e2eDir       = "/tmp/crisp-e2e"
	e2eBridge    = "crispe2e0"
	e2eNetPrefix = "10.213.78"
)

func TestMain(m *testing.M) {
	// Returning lets the testing package exit with m.Run's code.
	defer func() {
		if suite.binDir != "" {
			os.RemoveAll(suite.binDir)
		}
	}()
	var err error
	suite.repo, err = repoRoot()
	if err != nil {
		suite.reason = err.Error()
		runAndReport(m)
		return
	}
	suite.crictl = envOr("CRICTL", filepath.Join(suite.repo, ".tools/bin/crictl"))
	suite.critest = envOr("CRITEST", filepath.Join(suite.repo, ".tools/bin/critest"))
	if suite.binDir, err = os.MkdirTemp("", "crisp-e2e-bin-"); err != nil {
		suite.reason = err.Error()
		runAndReport(m)
		return
	}

	if envFile := os.Getenv("CRISP_CTRD_ENV"); envFile != "" {
		// A harness somebody else started and will stop.
		suite.harness, err = loadHarness(envFile)
		if err != nil {
			suite.reason = fmt.Sprintf("CRISP_CTRD_ENV=%s: %v", envFile, err)
		}
		runAndReport(m)
		return
	}
	if suite.reason = unavailable(); suite.reason != "" {
		runAndReport(m)
		return
	}
	// One harness at a time on this machine: parallel `go test` runs of this
	// package (several engineers, or -count) queue here.
	unlock, err := lockFile(e2eDir + ".lock")
	if err != nil {
		suite.reason = err.Error()
		runAndReport(m)
		return
	}
	defer unlock()
	scriptEnv := append(os.Environ(),
		"CRISP_CTRD_DIR="+e2eDir, "CRISP_CTRD_BRIDGE="+e2eBridge,
		"CRISP_CTRD_NET_PREFIX="+e2eNetPrefix, "CRICTL="+suite.crictl)
	start := time.Now()
	out, err := runScript(scriptEnv, "containerd-up.sh")
	if err != nil {
		suite.reason = fmt.Sprintf("scripts/containerd-up.sh failed: %v\n%s", err, out)
	} else {
		suite.upTook = time.Since(start)
		fmt.Fprintf(os.Stderr, "containerd e2e: harness up in %v under %s\n", suite.upTook.Round(10*time.Millisecond), e2eDir)
		if suite.harness, err = loadHarness(filepath.Join(e2eDir, "env")); err != nil {
			suite.reason = err.Error()
		}
	}
	defer func() {
		if out, err := runScript(scriptEnv, "containerd-down.sh"); err != nil {
			fmt.Fprintf(os.Stderr, "containerd e2e: scripts/containerd-down.sh failed: %v\n%s", err, out)
		}
	}()
	runAndReport(m)
}

// summaryFile is where TestMain writes what ran, relative to the repository:
// `go test` shows nothing of a passing package, and CI's log must show that
// the containerd suite ran rather than skipped (the Makefile prints it).
const summaryFile = ".work/e2e-containerd.txt"

// runAndReport runs the tests and writes the summary file.
func runAndReport(m *testing.M) {
	start := time.Now()
	code := m.Run()
	if suite.repo == "" {
		return
	}
	var b strings.Builder
	if suite.harness != nil {
		fmt.Fprintf(&b, "containerd e2e suite (internal/e2e/containerd): ran against %s", suite.harness.Endpoint)
		if suite.upTook > 0 {
			fmt.Fprintf(&b, " (containerd-up.sh took %v)", suite.upTook.Round(10*time.Millisecond))
		}
		b.WriteString("\n")
	} else {
		fmt.Fprintf(&b, "containerd e2e suite (internal/e2e/containerd): NOT RUN: %s\n", suite.reason)
	}
	counts := map[string]int{}
	suite.resultsMu.Lock()
	for _, r := range suite.results {
		counts[r.status]++
		fmt.Fprintf(&b, "  %s  %s (%v)\n", r.status, r.name, r.took.Round(10*time.Millisecond))
	}
	suite.resultsMu.Unlock()
	fmt.Fprintf(&b, "containerd e2e suite: %d passed, %d failed, %d skipped in %v (exit %d)\n",
		counts["PASS"], counts["FAIL"], counts["SKIP"], time.Since(start).Round(100*time.Millisecond), code)
	path := filepath.Join(suite.repo, summaryFile)
	err := os.MkdirAll(filepath.Dir(path), 0o755)
	if err == nil {
		err = os.WriteFile(path, []byte(b.String()), 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "containerd e2e: writing the summary: %v\n", err)
	}
}

// track records t's outcome for the summary once it ends (top-level tests).
func track(t testing.TB) {
	if strings.Contains(t.Name(), "/") {
		return
	}
	suite.resultsMu.Lock()
	defer suite.resultsMu.Unlock()
	if suite.tracked == nil {
		suite.tracked = map[testing.TB]bool{}
	}
	if suite.tracked[t] {
		return
	}
	suite.tracked[t] = true
	start := time.Now()
	t.Cleanup(func() {
		status := "PASS"
		if t.Failed() {
			status = "FAIL"
		} else if t.Skipped() {
			status = "SKIP"
		}
		suite.resultsMu.Lock()
		suite.results = append(suite.results, testResult{t.Name(), status, time.Since(start)})
		suite.resultsMu.Unlock()
	})
}

// unavailable says why the harness cannot start here, or "".
func unavailable() string {
	if runtime.GOOS != "linux" {
		return "the containerd suite runs on Linux only"
	}
	if os.Geteuid() != 0 {
		return "the containerd suite needs root (containerd, runc, mounts, network namespaces); run `sudo make test` or see README"
	}
	for _, bin := range []string{"containerd", "containerd-shim-runc-v2", "runc", "ctr"} {
		if _, err := exec.LookPath(bin); err != nil {
			return bin + " is not installed: run `make deps` as root (apt-get install containerd runc containernetworking-plugins busybox-static)"
		}
	}
	if _, err := os.Stat(suite.crictl); err != nil {
		return "crictl is not built at " + suite.crictl + ": run `make deps`"
	}
	return ""
}

// suiteHarness returns the running harness, or skips the test (fails it when
// CI=true) with the reason the harness is not there.
func suiteHarness(t testing.TB) *Harness {
	t.Helper()
	track(t)
	if suite.harness != nil {
		return suite.harness
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("containerd suite cannot run under CI=true: %s", suite.reason)
	}
	t.Skipf("containerd suite skipped: %s", suite.reason)
	return nil
}

func loadHarness(path string) (*Harness, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	vars := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			vars[k] = v
		}
	}
	port, _ := strconv.Atoi(vars["CRISP_CTRD_HTTPD_PORT"])
	h := &Harness{
		Dir: vars["CRISP_CTRD_DIR"], Endpoint: vars["CRISP_CTRD_ENDPOINT"], Log: vars["CRISP_CTRD_LOG"],
		Pod: vars["CRISP_CTRD_POD"], PodIP: vars["CRISP_CTRD_POD_IP"], PodConfig: vars["CRISP_CTRD_POD_CONFIG"],
		Ctr: vars["CRISP_CTRD_CTR"], HTTPDCtr: vars["CRISP_CTRD_HTTPD_CTR"], HTTPDPort: port,
		AttachCtr: vars["CRISP_CTRD_ATTACH_CTR"], HostnetPod: vars["CRISP_CTRD_HOSTNET_POD"],
		HostnetCtr: vars["CRISP_CTRD_HOSTNET_CTR"], HostnetPodConfig: vars["CRISP_CTRD_HOSTNET_POD_CONFIG"],
		BusyboxImage: vars["CRISP_CTRD_BUSYBOX_IMAGE"], HTTPDImage: vars["CRISP_CTRD_HTTPD_IMAGE"],
	}
	if h.Endpoint == "" || h.Pod == "" || h.Ctr == "" {
		return nil, fmt.Errorf("%s lacks CRISP_CTRD_ENDPOINT, CRISP_CTRD_POD or CRISP_CTRD_CTR", path)
	}
	return h, nil
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's folder")
		}
		dir = parent
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

func runScript(env []string, name string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(suite.repo, "scripts", name))
	cmd.Env = env
	cmd.Dir = suite.repo
	return cmd.CombinedOutput()
}

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

// crispBinary builds ./cmd/crisp once per test binary into a temporary folder.
func crispBinary(t testing.TB) string {
	t.Helper()
	suite.buildOnce.Do(func() {
		suite.crispBin = filepath.Join(suite.binDir, "crisp")
		cmd := exec.Command("go", "build", "-o", suite.crispBin, "./cmd/crisp")
		cmd.Dir = suite.repo
		if out, err := cmd.CombinedOutput(); err != nil {
			suite.buildErr = fmt.Errorf("go build ./cmd/crisp: %v\n%s", err, out)
		}
	})
	if suite.buildErr != nil {
		t.Fatal(suite.buildErr)
	}
	return suite.crispBin
}

// crispCmd is crisp with args against the harness (CONTAINER_RUNTIME_ENDPOINT
// set, no crictl config), for tests that wire stdin/stdout themselves.
func crispCmd(t testing.TB, ctx context.Context, args ...string) *exec.Cmd {
	t.Helper()
	h := suiteHarness(t)
	cmd := exec.CommandContext(ctx, crispBinary(t), args...)
	cmd.Env = append(cleanEnv(), "CONTAINER_RUNTIME_ENDPOINT="+h.Endpoint)
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// crisp runs crisp with args against the harness and returns what it did
// (commandTimeout at most).
func crisp(t testing.TB, args ...string) Result {
	t.Helper()
	return crispStdin(t, nil, args...)
}

// crispStdin is crisp with stdin read from in (closed at its end).
func crispStdin(t testing.TB, in io.Reader, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	return run(crispCmd(t, ctx, args...), in)
}

// crictlCmd is crictl v1.37.0 with args against the harness.
func crictlCmd(t testing.TB, ctx context.Context, args ...string) *exec.Cmd {
	t.Helper()
	h := suiteHarness(t)
	cmd := exec.CommandContext(ctx, suite.crictl, append([]string{"--runtime-endpoint", h.Endpoint, "--image-endpoint", h.Endpoint}, args...)...)
	// An empty config file: crictl otherwise warns that /etc/crictl.yaml is missing.
	cmd.Env = append(cleanEnv(), "CRI_CONFIG_FILE="+emptyCrictlConfig(t))
	cmd.WaitDelay = 5 * time.Second
	// crictl attach ignores SIGTERM (REAL_RUNTIME.md): kill it.
	cmd.Cancel = func() error { return cmd.Process.Kill() }
	return cmd
}

// crictl runs crictl with args against the harness (commandTimeout at most).
func crictl(t testing.TB, args ...string) Result {
	t.Helper()
	return crictlStdin(t, nil, args...)
}

// crictlStdin is crictl with stdin read from in.
func crictlStdin(t testing.TB, in io.Reader, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	return run(crictlCmd(t, ctx, args...), in)
}

func emptyCrictlConfig(t testing.TB) string {
	path := filepath.Join(suite.binDir, "crictl.yaml")
	if _, err := os.Stat(path); err != nil {
		if err := os.WriteFile(path, []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// cleanEnv is the test's environment without the CRI settings a developer's
// shell may carry, so every client talks to the harness only.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "CONTAINER_RUNTIME_ENDPOINT", "IMAGE_SERVICE_ENDPOINT", "CRI_CONFIG_FILE":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// run runs cmd to its end with stdin from in (nil: no stdin).
func run(cmd *exec.Cmd, in io.Reader) Result {
	var stdout, stderr bytes.Buffer
	cmd.Stdin = in
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	r := Result{Stdout: stdout.String(), Stderr: stderr.String(), ExitCode: cmd.ProcessState.ExitCode()}
	var exitErr *exec.ExitError
	if err != nil && !(errors.As(err, &exitErr) && r.ExitCode >= 0) {
		r.Err = err
	}
	return r
}

// Background is a command running alongside a test (port-forward, attach):
// its stdout and stderr lines are collected, and it is killed and waited
// for at the end of the test.
type Background struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	added chan struct{} // signalled on every new line
	done  chan struct{} // closed when the command has exited
	err   error
}

// startBackground starts cmd (its Stdout/Stderr must be unset).
func startBackground(t testing.TB, cmd *exec.Cmd) *Background {
	t.Helper()
	// Whatever starts from here must be gone once the command is waited for.
	leaks := goleak.IgnoreCurrent()
	b := &Background{cmd: cmd, added: make(chan struct{}, 1), done: make(chan struct{})}
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %v: %v", cmd.Args, err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			b.mu.Lock()
			b.lines = append(b.lines, sc.Text())
			b.mu.Unlock()
			select {
			case b.added <- struct{}{}:
			default:
			}
		}
	}()
	go func() {
		defer wg.Done()
		err := cmd.Wait()
		pw.Close()
		b.mu.Lock()
		b.err = err
		b.mu.Unlock()
		close(b.done)
	}()
	t.Cleanup(func() {
		if cmd.Process != nil {
			cmd.Process.Kill()
		}
		wg.Wait()
		if t.Failed() {
			t.Logf("%v output:\n%s", cmd.Args, b.Output())
		}
		goleak.VerifyNone(t, leaks)
	})
	return b
}

// Output is everything the command printed so far.
func (b *Background) Output() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

// WaitFor waits until an output line matches re and returns its submatches;
// it fails the test when the command exits or timeout passes first.
func (b *Background) WaitFor(t testing.TB, re *regexp.Regexp, timeout time.Duration) []string {
	t.Helper()
	deadline := time.After(timeout)
	seen := 0
	for {
		b.mu.Lock()
		for ; seen < len(b.lines); seen++ {
			if m := re.FindStringSubmatch(b.lines[seen]); m != nil {
				b.mu.Unlock()
				return m
			}
		}
		b.mu.Unlock()
		select {
		case <-b.added:
		case <-b.done:
			// Drain lines written just before the exit.
			b.mu.Lock()
			for ; seen < len(b.lines); seen++ {
				if m := re.FindStringSubmatch(b.lines[seen]); m != nil {
					b.mu.Unlock()
					return m
				}
			}
			err := b.err
			b.mu.Unlock()
			t.Fatalf("%v exited (%v) before printing a line matching %q; output:\n%s", b.cmd.Args, err, re, b.Output())
		case <-deadline:
			t.Fatalf("%v printed no line matching %q within %v; output:\n%s", b.cmd.Args, re, timeout, b.Output())
		}
	}
}

// Exited reports whether the command has ended, and its error.
func (b *Background) Exited() (bool, error) {
	select {
	case <-b.done:
		b.mu.Lock()
		defer b.mu.Unlock()
		return true, b.err
	default:
		return false, nil
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// httpGet fetches url, retrying connection failures until timeout (a
// forwarder may take a moment to listen). Only loopback and the harness's
// pod addresses are ever dialled.
func httpGet(t testing.TB, url string, timeout time.Duration) (string, error) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	deadline := time.Now().Add(timeout)
	for {
		resp, err := client.Get(url)
		if err == nil {
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("GET %s: %s", url, resp.Status)
			}
			return string(body), err
		}
		if time.Now().After(deadline) {
			return "", err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ContainerSpec is a container for newContainer.
type ContainerSpec struct {
	Name    string
	Image   string   // default: the harness's busybox image
	Command []string // default: sleep forever
	Stdin   bool
	TTY     bool
	// StdinOnce closes stdin (and so ends sh) when the first attach ends.
	StdinOnce bool
	// HostNetwork puts it in the host-network pod instead of the bridged one.
	HostNetwork bool
}

// newContainer creates and starts a container in one of the harness's pods
// with crictl and removes it at the end of the test.
func newContainer(t testing.TB, spec ContainerSpec) string {
	t.Helper()
	h := suiteHarness(t)
	pod, podConfig := h.Pod, h.PodConfig
	if spec.HostNetwork {
		pod, podConfig = h.HostnetPod, h.HostnetPodConfig
	}
	if spec.Image == "" {
		spec.Image = h.BusyboxImage
	}
	if spec.Command == nil {
		spec.Command = []string{"sleep", "2147483647"}
	}
	if spec.Name == "" {
		spec.Name = "t"
	}
	// Container names are unique per pod: add the time.
	name := fmt.Sprintf("%s-%d", spec.Name, time.Now().UnixNano())
	cfg := map[string]any{
		"metadata":   map[string]any{"name": name},
		"image":      map[string]any{"image": spec.Image},
		"command":    spec.Command,
		"stdin":      spec.Stdin,
		"stdin_once": spec.StdinOnce,
		"tty":        spec.TTY,
		"log_path":   name + ".log",
		"linux":      map[string]any{},
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "container.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := crictl(t, "create", pod, path, podConfig)
	if r.ExitCode != 0 {
		t.Fatalf("crictl create: %v", r)
	}
	id := strings.TrimSpace(r.Stdout)
	t.Cleanup(func() {
		if r := crictl(t, "rm", "-f", id); r.ExitCode != 0 {
			t.Logf("crictl rm -f %s: %v", id, r)
		}
	})
	if r := crictl(t, "start", id); r.ExitCode != 0 {
		t.Fatalf("crictl start %s: %v", id, r)
	}
	return id
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

// critestLock is a machine-wide lock around critest runs: critest's
// port-forward specs listen on fixed host ports (12001, 12002; 12003 served),
// so two runs of them at once would collide. This suite leaves those specs
// out but holds the lock too, so that a package running them can take it.
const critestLock = "/tmp/crisp-critest.lock"

// holdLock takes path's exclusive flock until the end of the test.
func holdLock(t testing.TB, path string) {
	t.Helper()
	unlock, err := lockFile(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock)
}

// pseudoRandom returns n reproducible bytes that do not compress (xorshift).
func pseudoRandom(n int) []byte {
	data := make([]byte, n)
	var x uint64 = 0x9e3779b97f4a7c15
	for i := range data {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		data[i] = byte(x >> 32)
	}
	return data
}
