package crictldiff

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
)

// TestCrictlCorpus runs every line of testdata/corpus.txt through crictl
// and crisp, each on a fresh mock runtime holding the same objects, and
// compares exit status, stdout and what is left behind. A line that
// differs fails unless docs/crictl.md lists it; a listed line that no
// longer differs fails too, so the list stays true.
func TestCrictlCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("builds crisp and runs crictl: not in -short")
	}
	repo := repoRoot(t)
	crictl := crictlBinary(t, repo)
	crisp := crispBinary(t, repo)
	cases := readCorpus(t, filepath.Join("testdata", "corpus.txt"))
	diffs := readDifferences(t, filepath.Join(repo, "docs", "crictl.md"))
	for line := range diffs {
		if !slices.ContainsFunc(cases, func(c Case) bool { return c.Line == line }) {
			t.Errorf("docs/crictl.md lists %q, which is not a line of the corpus", line)
		}
	}
	shared := startShared(t)
	for _, c := range cases {
		t.Run(c.Line, func(t *testing.T) {
			t.Parallel() // -parallel (GOMAXPROCS) at a time
			// The two sides at once: a case's time is mostly two process starts.
			var want outcome
			var wantErr error
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { defer wg.Done(); want, wantErr = runSide(crictl, c, shared) }()
			got, err := runSide(crisp, c, shared)
			wg.Wait()
			if err := errors.Join(wantErr, err); err != nil {
				t.Fatal(err)
			}
			found := compare(want, got)
			d, listed := diffs[c.Line]
			if listed && d.What == "order" {
				// The runtime's order varies from run to run: the lines are
				// compared, not their order.
				if sortedLines(want.stdout) == sortedLines(got.stdout) {
					found = slices.DeleteFunc(found, func(f finding) bool { return f.what == "stdout" })
				}
				listed = false
			}
			if listed && d.What == "figures" {
				// Live figures (CPU, memory of real processes): stdout is
				// not compared, the rest is.
				found = slices.DeleteFunc(found, func(f finding) bool { return f.what == "stdout" })
				listed = false
			}
			switch {
			case listed && len(found) == 0:
				t.Errorf("listed in docs/crictl.md (%s: %s) but crisp now behaves as crictl: remove the row", d.What, d.Why)
			case listed:
				for _, f := range found {
					if d.What != "all" && d.What != f.what {
						t.Errorf("docs/crictl.md lists a difference in %s, but %s differs too:\n%s", d.What, f.what, f.detail)
					}
				}
			default:
				for _, f := range found {
					t.Errorf("%s differs from crictl's (not listed in docs/crictl.md):\n%s", f.what, f.detail)
				}
			}
		})
	}
}

// outcome is what one client did with a case.
type outcome struct {
	status         int
	stdout, stderr string
	state          string
}

type finding struct{ what, detail string }

func compare(crictl, crisp outcome) []finding {
	var out []finding
	if !SameStatus(crictl.status, crisp.status) {
		out = append(out, finding{"status", fmt.Sprintf("crictl exits %d, crisp %d\ncrictl stderr: %s\ncrisp stderr: %s",
			crictl.status, crisp.status, clip(crictl.stderr), clip(crisp.stderr))})
	}
	if crictl.stdout != crisp.stdout {
		out = append(out, finding{"stdout", fmt.Sprintf("crictl:\n%s\ncrisp:\n%s\ncrisp stderr: %s", crictl.stdout, crisp.stdout, clip(crisp.stderr))})
	}
	if crictl.state != crisp.state {
		out = append(out, finding{"state", fmt.Sprintf("after crictl:\n%s\nafter crisp:\n%s", crictl.state, crisp.state)})
	}
	return out
}

func sortedLines(s string) string {
	lines := strings.Split(s, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func clip(s string) string {
	if len(s) > 600 {
		return s[:600] + "..."
	}
	return s
}

// runSide runs c with bin on a fresh runtime and fixture.
// A read-only case (c.ReadOnly) runs on sh instead, the runtime every
// read-only case of both clients shares (starting and seeding a runtime is
// most of a case's time); its state must be the same after as before.
func runSide(bin string, c Case, sh *sharedRuntime) (outcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var env *mocktest.Env
	var fx Fixture
	var before string
	var err error
	if c.ReadOnly() {
		env, fx, before = sh.env, sh.fx, sh.state
	} else {
		if env, err = mocktest.StartRuntime(ctx, mockruntime.Config{}); err != nil {
			return outcome{}, err
		}
		defer func() { _ = env.Close() }() // a failed close shows in the next case's start
		if fx, err = seed(ctx, env); err != nil {
			return outcome{}, err
		}
	}
	runCtx, runCancel := context.WithTimeout(ctx, 20*time.Second)
	defer runCancel()
	cmd := exec.CommandContext(runCtx, bin, fx.Expand(c.Args)...)
	cmd.Env = append(cleanEnv(), "CRI_CONFIG_FILE="+filepath.Join(fx.Dir, "crictl.yaml"), "HOME="+fx.Dir)
	cmd.Dir = fx.Dir
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	o := outcome{stdout: fx.Normalize(stdout.String()), stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case errors.Is(runCtx.Err(), context.DeadlineExceeded):
		return o, fmt.Errorf("%s %s did not end within 20s\nstderr: %s", filepath.Base(bin), c.Line, clip(stderr.String()))
	case errors.As(err, &exitErr):
		o.status = exitErr.ExitCode()
	case err != nil:
		return o, fmt.Errorf("%s: %w", filepath.Base(bin), err)
	}
	state, err := snapshot(ctx, env, fx)
	o.state = fx.Normalize(state)
	if err == nil && c.ReadOnly() && state != before {
		err = fmt.Errorf("%s %s changed the shared runtime's state: it is not read-only (see Case.ReadOnly)\nbefore:\n%s\nafter:\n%s",
			filepath.Base(bin), c.Line, before, state)
	}
	return o, err
}

// seed makes the objects every case starts with: pod "web" (namespace
// default) holding container "sleeper" (running) and "done" (exited), two
// tags of one image beside the default image, and the files runp, create
// and run read, and crictl.yaml naming the runtime.
func seed(ctx context.Context, env *mocktest.Env) (Fixture, error) {
	fx := Fixture{Dir: env.Dir}
	var err error
	if fx.Pod, err = env.CreatePod(ctx, "web"); err != nil {
		return fx, err
	}
	if fx.Container, err = env.CreateContainer(ctx, fx.Pod, mocktest.ContainerSpec{Name: "sleeper", Command: []string{"sleep", "600"}, Labels: kubeletLabels("sleeper")}); err != nil {
		return fx, err
	}
	if fx.Exited, err = env.CreateContainer(ctx, fx.Pod, mocktest.ContainerSpec{Name: "done", Command: []string{"true"}, Labels: kubeletLabels("done")}); err != nil {
		return fx, err
	}
	for _, tag := range []string{"1", "2"} {
		if _, err := env.Images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "gcr.io/k8s-staging-cri-tools/test-image-tags:" + tag}}); err != nil {
			return fx, err
		}
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		st, err := env.CRI.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: fx.Exited})
		if err != nil {
			return fx, err
		}
		if st.Status.State == runtimeapi.ContainerState_CONTAINER_EXITED {
			break
		}
		if time.Now().After(deadline) {
			return fx, errors.New("container done did not exit within 20s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	files := map[string]string{
		"crictl.yaml": fmt.Sprintf("runtime-endpoint: %s\nimage-endpoint: %s\ntimeout: 10\n", env.Endpoint, env.Endpoint),
		"pod.json": fmt.Sprintf(`{"metadata": {"name": "new", "namespace": "corpus", "uid": "new-uid"}, "labels": {"app": "new"}, "log_directory": %q}`,
			filepath.Join(env.Dir, "newpod")),
		"ctr.json": fmt.Sprintf(`{"metadata": {"name": "added"}, "image": {"image": %q}, "command": ["sleep", "600"], "log_path": "added.log"}`,
			mockruntime.DefaultImage),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(env.Dir, name), []byte(data), 0o644); err != nil {
			return fx, err
		}
	}
	return fx, nil
}

// sharedRuntime is the runtime the read-only cases share, seeded once.
type sharedRuntime struct {
	env   *mocktest.Env
	fx    Fixture
	state string
}

func startShared(t *testing.T) *sharedRuntime {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env, err := mocktest.StartRuntime(context.Background(), mockruntime.Config{})
	if err != nil {
		t.Fatal(err)
	}
	// Cleanup runs after the parallel subtests.
	t.Cleanup(func() {
		if err := env.Close(); err != nil {
			t.Error(err)
		}
	})
	fx, err := seed(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	state, err := snapshot(ctx, env, fx)
	if err != nil {
		t.Fatal(err)
	}
	return &sharedRuntime{env: env, fx: fx, state: state}
}

// kubeletLabels are the labels a kubelet puts on a container of pod web
// (crictl's ps shows the pod's name and namespace from them) and role.
func kubeletLabels(role string) map[string]string {
	return map[string]string{"role": role, "io.kubernetes.pod.name": "web", "io.kubernetes.pod.namespace": "default",
		"io.kubernetes.container.name": role}
}

// snapshot is what the runtime holds, by name and state (IDs differ from
// one runtime to the next), and crictl.yaml, which config writes.
func snapshot(ctx context.Context, env *mocktest.Env, fx Fixture) (string, error) {
	var lines []string
	pods, err := env.CRI.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return "", err
	}
	podName := map[string]string{}
	for _, p := range pods.Items {
		podName[p.Id] = p.Metadata.Namespace + "/" + p.Metadata.Name
		lines = append(lines, fmt.Sprintf("pod %s %s", podName[p.Id], p.State))
	}
	ctrs, err := env.CRI.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return "", err
	}
	for _, c := range ctrs.Containers {
		lines = append(lines, fmt.Sprintf("container %s/%s %s", podName[c.PodSandboxId], c.Metadata.Name, c.State))
	}
	imgs, err := env.Images.ListImages(ctx, &runtimeapi.ListImagesRequest{})
	if err != nil {
		return "", err
	}
	for _, im := range imgs.Images {
		lines = append(lines, "image "+strings.Join(im.RepoTags, ","))
	}
	slices.Sort(lines)
	cfg, err := os.ReadFile(filepath.Join(fx.Dir, "crictl.yaml"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	return strings.Join(lines, "\n") + "\ncrictl.yaml:\n" + string(cfg), nil
}

func readCorpus(t *testing.T, path string) []Case {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	cases, err := ParseCorpus(f)
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

func readDifferences(t *testing.T, path string) map[string]Difference {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	d, err := ParseDifferences(f)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func crictlBinary(t *testing.T, repo string) string {
	t.Helper()
	bin := os.Getenv("CRICTL")
	if bin == "" {
		bin = filepath.Join(repo, ".tools", "bin", "crictl")
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("crictl is needed under CI=true: %v", err)
		}
		t.Skipf("crictl is not built (%v): run `make deps`", err)
	}
	return bin
}

var built struct {
	once     sync.Once
	dir, bin string
	err      error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir) // best effort: a temporary folder
	}
	os.Exit(code)
}

// crispBinary builds ./cmd/crisp once.
func crispBinary(t *testing.T, repo string) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "crisp-cd-bin-"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "crisp")
		cmd := exec.Command("go", "build", "-o", built.bin, "./cmd/crisp")
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build ./cmd/crisp: %w\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// cleanEnv is the test's environment without the CRI settings a shell may
// carry.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "CONTAINER_RUNTIME_ENDPOINT", "IMAGE_SERVICE_ENDPOINT", "CRI_CONFIG_FILE", "HOME",
			"CRICTL_AUTH", "CRICTL_CREDS", "CRICTL_PULL_TIMEOUT":
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
