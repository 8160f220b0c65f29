package mockruntime_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := findLeaks(5 * time.Second); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: goroutines outlived the tests: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// findLeaks is goleak.Find with a grace period longer than
// VerifyTestMain's: spdystream's Connection.Close leaves a shutdown
// goroutine that may wait a second after its connection was cut.
func findLeaks(grace time.Duration) error {
	deadline := time.Now().Add(grace)
	for {
		err := goleak.Find()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// noChildren fails when a process of ours outlives the runtime.
func noChildren(t *testing.T) {
	t.Helper()
	t.Cleanup(func() {
		if kids := childProcesses(t); len(kids) > 0 {
			t.Errorf("child processes remain after the test: %v", kids)
		}
	})
}

// childProcesses lists the live (or zombie) children of this process.
func childProcesses(t *testing.T) []string {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("list /proc: %v", err)
	}
	self := os.Getpid()
	var kids []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut at ')'.
		i := strings.LastIndexByte(string(st), ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(st)[i+1:])
		if len(fields) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(fields[1]); ppid == self {
			kids = append(kids, strconv.Itoa(pid)+" "+string(st)[:i+1])
		}
	}
	return kids
}

func start(t *testing.T) *mocktest.Env {
	t.Helper()
	noChildren(t)
	return mocktest.Start(t, mockruntime.Config{})
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestVersionStatusAndConfig(t *testing.T) {
	env := start(t)
	ctx := ctxT(t)
	v, err := env.CRI.Version(ctx, &runtimeapi.VersionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if v.RuntimeName != "crisp-mock" || v.RuntimeApiVersion != "v1" {
		t.Errorf("Version = %v, want crisp-mock, API v1", v)
	}
	st, err := env.CRI.Status(ctx, &runtimeapi.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	ready := map[string]bool{}
	for _, c := range st.Status.Conditions {
		ready[c.Type] = c.Status
	}
	if !ready[runtimeapi.RuntimeReady] || !ready[runtimeapi.NetworkReady] {
		t.Errorf("Status conditions = %v, want RuntimeReady and NetworkReady true", st.Status.Conditions)
	}
	rc, err := env.CRI.RuntimeConfig(ctx, &runtimeapi.RuntimeConfigRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if rc.Linux.CgroupDriver != runtimeapi.CgroupDriver_CGROUPFS {
		t.Errorf("cgroup driver = %v, want cgroupfs", rc.Linux.CgroupDriver)
	}
	fi, err := os.Stat(strings.TrimPrefix(env.Endpoint, "unix://"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode = %v, want 0600", fi.Mode().Perm())
	}
}

func TestContainerLifecycleAndLog(t *testing.T) {
	env := start(t)
	ctx := ctxT(t)
	podID := env.RunPod(t, "web")
	ps, err := env.CRI.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: podID})
	if err != nil {
		t.Fatal(err)
	}
	if ps.Status.Network.Ip != "127.0.0.1" || ps.Status.State != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Errorf("pod status = %v, want ready with IP 127.0.0.1", ps.Status)
	}

	mark := filepath.Join(t.TempDir(), "printed")
	id := env.RunContainer(t, podID, mocktest.ContainerSpec{
		Name:    "printer",
		Command: []string{"sh", "-c", `echo "hello $WHO"; echo oops >&2; printf tail; touch "$MARK"; exec sleep 1000`},
		Env:     map[string]string{"WHO": "world", "MARK": mark},
	})
	st := waitState(t, env, id, runtimeapi.ContainerState_CONTAINER_RUNNING)
	waitFile(t, mark)
	if st.LogPath == "" {
		t.Fatal("no log path")
	}
	// Stop with a grace period: sleep dies of SIGTERM.
	if _, err := env.CRI.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 10}); err != nil {
		t.Fatal(err)
	}
	st = waitState(t, env, id, runtimeapi.ContainerState_CONTAINER_EXITED)
	if st.ExitCode != 128+int32(syscall.SIGTERM) {
		t.Errorf("exit code after SIGTERM = %d, want %d", st.ExitCode, 128+int32(syscall.SIGTERM))
	}
	logData, err := os.ReadFile(st.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	want := []*regexp.Regexp{
		regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT\S+ stdout F hello world$`),
		regexp.MustCompile(`(?m)^\S+ stderr F oops$`),
		regexp.MustCompile(`(?m)^\S+ stdout F tail$`),
	}
	for _, re := range want {
		if !re.Match(logData) {
			t.Errorf("log %s lacks %v:\n%s", st.LogPath, re, logData)
		}
	}

	if _, err := env.CRI.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id}); err != nil {
		t.Fatal(err)
	}
	_, err = env.CRI.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if status.Code(err) != codes.NotFound {
		t.Errorf("status of a removed container: %v, want NotFound", err)
	}
	if _, err := env.CRI.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: podID}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.CRI.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: podID}); err != nil {
		t.Fatal(err)
	}
	_, err = env.CRI.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: podID})
	if status.Code(err) != codes.NotFound {
		t.Errorf("status of a removed pod: %v, want NotFound", err)
	}
}

// waitFile waits until path exists (a container's sign of progress).
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitState(t *testing.T, env *mocktest.Env, id string, want runtimeapi.ContainerState) *runtimeapi.ContainerStatus {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := env.CRI.ContainerStatus(context.Background(), &runtimeapi.ContainerStatusRequest{ContainerId: id})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status.State == want {
			return resp.Status
		}
		if time.Now().After(deadline) {
			t.Fatalf("container %s is %v, want %v", id, resp.Status.State, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestExecSync(t *testing.T) {
	env := start(t)
	ctx := ctxT(t)
	podID := env.RunPod(t, "p")
	id := env.RunContainer(t, podID, mocktest.ContainerSpec{Command: []string{"sleep", "1000"}, WorkingDir: "/tmp", Env: map[string]string{"X": "42"}})

	resp, err := env.CRI.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: []string{"sh", "-c", `echo "$X $(pwd)"; echo err >&2; exit 7`}})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Stdout) != "42 /tmp\n" || string(resp.Stderr) != "err\n" || resp.ExitCode != 7 {
		t.Errorf("ExecSync = stdout %q stderr %q code %d; want %q %q 7", resp.Stdout, resp.Stderr, resp.ExitCode, "42 /tmp\n", "err\n")
	}
	// In a busybox image, sh is busybox and PATH's first folder holds the
	// applets (top, nc, sleep...).
	resp, err = env.CRI.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: []string{"sh", "-c", `readlink /proc/$$/exe; ls "${PATH%%:*}/top"`}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/bin/busybox"); err != nil {
		t.Logf("no /bin/busybox (%v): the host's sh stands in; output %q", err, resp.Stdout)
	} else if lines := strings.Fields(string(resp.Stdout)); len(lines) != 2 || !strings.HasSuffix(lines[0], "/busybox") || !strings.HasSuffix(lines[1], "/top") {
		t.Errorf("sh and PATH in a busybox container: %q (stderr %q), want busybox and an applet folder holding top", resp.Stdout, resp.Stderr)
	}

	_, err = env.CRI.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: []string{"sleep", "30"}, Timeout: 1})
	if status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("ExecSync past its timeout: %v, want DeadlineExceeded", err)
	}
	// Replies are capped at 16 MiB per stream, as on containerd.
	_, err = env.CRI.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: []string{"head", "-c", "17000000", "/dev/zero"}})
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("ExecSync of 17 MB of output: %v, want ResourceExhausted", err)
	}
	_, err = env.CRI.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: "nope", Cmd: []string{"true"}})
	if status.Code(err) != codes.NotFound {
		t.Errorf("ExecSync in an unknown container: %v, want NotFound", err)
	}
	_, err = env.CRI.ExecSync(ctx, &runtimeapi.ExecSyncRequest{ContainerId: id})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("ExecSync without a command: %v, want InvalidArgument", err)
	}
}

func TestListFilters(t *testing.T) {
	env := start(t)
	ctx := ctxT(t)
	p1 := env.RunPod(t, "one")
	p2 := env.RunPod(t, "two")
	c1 := env.RunContainer(t, p1, mocktest.ContainerSpec{Name: "a", Command: []string{"sleep", "1000"}, Labels: map[string]string{"app": "x"}})
	c2 := env.RunContainer(t, p2, mocktest.ContainerSpec{Name: "b", Command: []string{"true"}, Labels: map[string]string{"app": "y"}})
	waitState(t, env, c2, runtimeapi.ContainerState_CONTAINER_EXITED)
	if _, err := env.CRI.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: p2}); err != nil {
		t.Fatal(err)
	}

	ids := func(f *runtimeapi.ContainerFilter) []string {
		resp, err := env.CRI.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: f})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range resp.Containers {
			out = append(out, c.Id)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		filter *runtimeapi.ContainerFilter
		want   []string
	}{
		{"all", nil, []string{c2, c1}},
		{"id prefix", &runtimeapi.ContainerFilter{Id: c1[:12]}, []string{c1}},
		{"pod", &runtimeapi.ContainerFilter{PodSandboxId: p2}, []string{c2}},
		{"running", &runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}}, []string{c1}},
		{"label", &runtimeapi.ContainerFilter{LabelSelector: map[string]string{"app": "y"}}, []string{c2}},
		{"no match", &runtimeapi.ContainerFilter{LabelSelector: map[string]string{"app": "z"}}, nil},
	} {
		if got := ids(tc.filter); strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("ListContainers(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}

	pods := func(f *runtimeapi.PodSandboxFilter) []string {
		resp, err := env.CRI.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: f})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range resp.Items {
			out = append(out, p.Id)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		filter *runtimeapi.PodSandboxFilter
		want   []string
	}{
		{"all", nil, []string{p2, p1}},
		{"id", &runtimeapi.PodSandboxFilter{Id: p1}, []string{p1}},
		{"ready", &runtimeapi.PodSandboxFilter{State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}}, []string{p1}},
		{"label", &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{"crisp.test/pod": "two"}}, []string{p2}},
	} {
		if got := pods(tc.filter); strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("ListPodSandbox(%s) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestBadRequests(t *testing.T) {
	env := start(t)
	ctx := ctxT(t)
	podID := env.RunPod(t, "p")
	for _, tc := range []struct {
		name string
		cfg  *runtimeapi.ContainerConfig
		want codes.Code
	}{
		{"no name", &runtimeapi.ContainerConfig{Image: &runtimeapi.ImageSpec{Image: mockruntime.DefaultImage}}, codes.InvalidArgument},
		{"no image", &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "x"}}, codes.InvalidArgument},
		{"image not pulled", &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "x"}, Image: &runtimeapi.ImageSpec{Image: "never/pulled"}}, codes.NotFound},
		{"missing program", &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "x"}, Image: &runtimeapi.ImageSpec{Image: mockruntime.DefaultImage}, Command: []string{"no-such-program-anywhere"}}, codes.InvalidArgument},
		{"missing working dir", &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "x"}, Image: &runtimeapi.ImageSpec{Image: mockruntime.DefaultImage}, WorkingDir: "/no/such/dir"}, codes.InvalidArgument},
	} {
		_, err := env.CRI.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: podID, Config: tc.cfg})
		if status.Code(err) != tc.want {
			t.Errorf("CreateContainer(%s): %v, want %v", tc.name, err, tc.want)
		}
	}
	// An image with no default command needs one.
	if _, err := env.Images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "alpine"}}); err != nil {
		t.Fatal(err)
	}
	_, err := env.CRI.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: podID, Config: &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "x"}, Image: &runtimeapi.ImageSpec{Image: "alpine"}}})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("CreateContainer(image without a command): %v, want InvalidArgument", err)
	}
	_, err = env.CRI.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: "nope", Config: &runtimeapi.ContainerConfig{}})
	if status.Code(err) != codes.NotFound {
		t.Errorf("CreateContainer(unknown pod): %v, want NotFound", err)
	}
	for name, call := range map[string]func() error{
		"StartContainer": func() error {
			_, err := env.CRI.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: "nope"})
			return err
		},
		"ContainerStatus": func() error {
			_, err := env.CRI.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: "nope"})
			return err
		},
		"Exec": func() error {
			_, err := env.CRI.Exec(ctx, &runtimeapi.ExecRequest{ContainerId: "nope", Cmd: []string{"true"}, Stdout: true})
			return err
		},
		"PortForward": func() error {
			_, err := env.CRI.PortForward(ctx, &runtimeapi.PortForwardRequest{PodSandboxId: "nope"})
			return err
		},
	} {
		if err := call(); status.Code(err) != codes.NotFound {
			t.Errorf("%s(unknown ID): %v, want NotFound", name, err)
		}
	}
	// Stopping and removing what is not there succeeds: the CRI makes
	// them idempotent (critest's Idempotence specs).
	for name, call := range map[string]func() error{
		"StopContainer": func() error {
			_, err := env.CRI.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: "nope"})
			return err
		},
		"RemoveContainer": func() error {
			_, err := env.CRI.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: "nope"})
			return err
		},
		"StopPodSandbox": func() error {
			_, err := env.CRI.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: "nope"})
			return err
		},
		"RemovePodSandbox": func() error {
			_, err := env.CRI.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: "nope"})
			return err
		},
		"RemoveImage": func() error {
			_, err := env.Images.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: "nope:1"}})
			return err
		},
	} {
		if err := call(); err != nil {
			t.Errorf("%s(unknown ID): %v, want success (idempotent)", name, err)
		}
	}
}
