package containerd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Harness is a running runtime and what its up script created in it, read
// from the env file the script writes (CRISP_CTRD_* or CRISP_CRIO_*
// variables: runtimeSpec.kind).
type Harness struct {
	Name             string // the runtime's subtest name: "containerd-1.6", "containerd-2.4"
	Label            string // its column in docs/interop.md: "containerd 1.6"
	Version          string // containerd --version's: "1.6.20~ds1", "v2.4.2"
	Dir              string // the harness folder (config, state, logs, crictl.yaml)
	Endpoint         string // unix:///.../containerd.sock
	Log              string // the runtime's log file
	Registry         string // CRI-O: the harness's local registry, 127.0.0.1:PORT
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

	spec *runtimeSpec
}

// eachRuntime runs fn once per runtime, as a subtest named by the runtime
// (TestX/containerd-1.6, TestX/containerd-2.4, TestX/crio-1.34). The
// runtimes' subtests run at the same time (runtimesAtOnce), each against its
// own harness; the tests still run one after the other, so on one runtime
// nothing else runs beside a test. A runtime whose harness is not up skips
// its subtest saying why (fails it under CI=true). This is how a test runs
// "the same on every runtime".
func eachRuntime(t *testing.T, fn func(t *testing.T, h *Harness)) {
	t.Helper()
	for _, r := range suite.runtimes {
		t.Run(r.spec.name, func(t *testing.T) {
			t.Parallel()
			fn(t, r.require(t))
		})
	}
}

// harnesses returns every runtime's harness, for a test that needs them all
// at once (the interop matrix); it skips (fails under CI=true) when one is
// not up.
func harnesses(t testing.TB) []*Harness {
	t.Helper()
	track(t, "")
	var hs []*Harness
	for _, r := range suite.runtimes {
		if r.harness == nil {
			skipOrFail(t, fmt.Sprintf("%s: %s", r.spec.name, r.reason))
		}
		hs = append(hs, r.harness)
	}
	return hs
}

// require returns r's harness for t, or skips t (fails it under CI=true)
// with the reason it is not up.
func (r *rt) require(t testing.TB) *Harness {
	t.Helper()
	track(t, r.spec.name)
	if r.harness == nil {
		skipOrFail(t, r.reason)
	}
	return r.harness
}

func skipOrFail(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv("CI") == "true" && !strings.Contains(reason, notSelected) && !testing.Short() {
		t.Fatalf("containerd suite cannot run under CI=true: %s", reason)
	}
	t.Skipf("containerd suite skipped: %s", reason)
}

// shortReason is why -short (make test-short) runs none of the suite.
const shortReason = "-short: the suite starts two containerds, which takes minutes; make test runs it"

// notSelected is the reason of a runtime left out with CRISP_E2E_RUNTIMES.
const notSelected = "not in CRISP_E2E_RUNTIMES"

// selected reports whether CRISP_E2E_RUNTIMES (a comma-separated list of
// runtime names, e.g. containerd-2.4; unset: all) includes s.
func (s *runtimeSpec) selected() bool {
	want := os.Getenv("CRISP_E2E_RUNTIMES")
	return want == "" || slices.Contains(strings.Split(want, ","), s.name)
}

func loadHarness(path string, spec *runtimeSpec) (*Harness, error) {
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
	v := func(name string) string { return vars[spec.kind.varPrefix+"_"+name] }
	port, err := strconv.Atoi(v("HTTPD_PORT"))
	if err != nil {
		return nil, fmt.Errorf("%s: %s_HTTPD_PORT: %w", path, spec.kind.varPrefix, err)
	}
	h := &Harness{
		Name: spec.name, Label: spec.label, Version: v("VERSION"), spec: spec,
		Dir: v("DIR"), Endpoint: v("ENDPOINT"), Log: v("LOG"), Registry: v("REGISTRY"),
		Pod: v("POD"), PodIP: v("POD_IP"), PodConfig: v("POD_CONFIG"),
		Ctr: v("CTR"), HTTPDCtr: v("HTTPD_CTR"), HTTPDPort: port,
		AttachCtr: v("ATTACH_CTR"), HostnetPod: v("HOSTNET_POD"),
		HostnetCtr: v("HOSTNET_CTR"), HostnetPodConfig: v("HOSTNET_POD_CONFIG"),
		BusyboxImage: v("BUSYBOX_IMAGE"), HTTPDImage: v("HTTPD_IMAGE"),
	}
	if h.Endpoint == "" || h.Pod == "" || h.Ctr == "" {
		return nil, fmt.Errorf("%s lacks %s_ENDPOINT, _POD or _CTR", path, spec.kind.varPrefix)
	}
	return h, nil
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
	// Mounts bind host files or folders into the container, read-only.
	Mounts []Mount
}

// Mount is a read-only bind mount of HostPath at ContainerPath.
type Mount struct {
	HostPath, ContainerPath string
}

// newContainer creates and starts a container in one of the harness's pods
// with crictl and removes it at the end of the test.
func (h *Harness) newContainer(t testing.TB, spec ContainerSpec) string {
	t.Helper()
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
	if len(spec.Mounts) > 0 {
		var mounts []map[string]any
		for _, m := range spec.Mounts {
			mounts = append(mounts, map[string]any{"host_path": m.HostPath, "container_path": m.ContainerPath, "readonly": true})
		}
		cfg["mounts"] = mounts
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "container.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := h.crictl(t, "create", pod, path, podConfig)
	if r.ExitCode != 0 {
		t.Fatalf("crictl create: %v", r)
	}
	id := strings.TrimSpace(r.Stdout)
	t.Cleanup(func() {
		if r := h.crictl(t, "rm", "-f", id); r.ExitCode != 0 {
			t.Logf("crictl rm -f %s: %v", id, r)
		}
	})
	if r := h.crictl(t, "start", id); r.ExitCode != 0 {
		t.Fatalf("crictl start %s: %v", id, r)
	}
	return id
}
