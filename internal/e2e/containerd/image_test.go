package containerd

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/crisp-cri/crisp/deploy"
	"github.com/crisp-cri/crisp/internal/feature/report"
)

// TestImageRunsSmokeAsTheDaemonSetSays builds crisp's OCI image as `make
// image` does, imports it into containerd with ctr, and runs through CRI the
// pod of deploy/daemonset.yaml: its sidecar (the container smoke targets)
// and its smoke container (args, env, socket mount, read-only root, users),
// in the harness's host-network pod, as the manifest's hostNetwork says.
// Only what a node supplies is put in: the node's and the pod's names for
// the downward API, the harness's socket for the hostPath, the harness's
// offline busybox for the registry's, and a free port for 7777 (other suites
// share this host's network). crisp smoke must exit 0 inside it with a JSON
// report that reads. internal/e2e/kubelet runs the manifests on a kubelet.
func TestImageRunsSmokeAsTheDaemonSetSays(t *testing.T) {
	// The image is built once, by the runtimes' subtests' first, into a
	// folder that lives as long as the whole test.
	img := &builtImage{dir: t.TempDir()}
	eachRuntime(t, func(t *testing.T, h *Harness) {
		testImageRunsSmoke(t, h, img)
	})
}

// builtImage is the image archive the runtimes' subtests share.
type builtImage struct {
	dir string
	mu  sync.Mutex // the subtests run at once
	tar string
}

// archive builds the image the first time (again should that fail) and
// returns its archive.
func (img *builtImage) archive(t *testing.T, name, tag string) string {
	img.mu.Lock()
	defer img.mu.Unlock()
	if img.tar == "" {
		img.tar = buildImage(t, img.dir, name, tag)
	}
	return img.tar
}

func testImageRunsSmoke(t *testing.T, h *Harness, img *builtImage) {
	ds, err := deploy.DaemonSet()
	if err != nil {
		t.Fatal(err)
	}
	pod := ds.Spec.Template.Spec
	if !pod.HostNetwork {
		t.Fatal("the DaemonSet no longer asks for the host network: this test runs in the harness's host-network pod")
	}
	var smoke, target corev1.Container
	for _, c := range pod.InitContainers {
		switch {
		case c.Name == "smoke":
			smoke = c
		case c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways:
			target = c
		}
	}
	if smoke.Name == "" || target.Name == "" {
		t.Fatal("the DaemonSet has no init container smoke and no sidecar for it to target")
	}
	name, tag, ok := strings.Cut(smoke.Image, ":")
	if !ok {
		t.Fatalf("the manifest's image %q has no tag", smoke.Image)
	}

	ref := "docker.io/library/" + smoke.Image
	h.loadImage(t, img.archive(t, name, tag), ref)

	podName := strings.TrimSpace(h.crictl(t, "inspectp", "-o", "go-template", "--template", "{{.status.metadata.name}}", h.HostnetPod).Stdout)
	port := strconv.Itoa(freePort(t))
	start := func(c corev1.Container, fill *strings.Replacer) (id, name string) {
		cfg, name := containerConfig(t, h, pod, c, fill, podName)
		cfgPath := filepath.Join(t.TempDir(), c.Name+".json")
		if err := os.WriteFile(cfgPath, cfg, 0o644); err != nil {
			t.Fatal(err)
		}
		return h.crictlStart(t, h.HostnetPod, cfgPath, h.HostnetPodConfig), name
	}
	targetID, targetName := start(target, strings.NewReplacer("7777", port))
	t.Cleanup(func() { h.crictl(t, "rm", "-f", targetID) })
	// The containers of the shared host-network pod get unique names here:
	// smoke is pointed at the sidecar's.
	runSmoke := func() (int, Result) {
		id, _ := start(smoke, strings.NewReplacer("7777", port, "$(POD_NAME)", podName, target.Name, targetName))
		t.Cleanup(func() { h.crictl(t, "rm", "-f", id) })
		code := h.waitExited(t, id, commandTimeout)
		return code, h.crictl(t, "logs", id)
	}
	code, logs := runSmoke()
	for rerun := 1; code != 0 && h.spec.kind == crioKind && onlyLostTTYOutput(logs.Stdout) && rerun <= lostTTYReruns; rerun++ {
		// CRI-O 1.34 now and then reports a TTY exec's exit before it has
		// copied its last output (docs/runtimes.md): smoke rightly fails
		// it; a fresh run tells that defect from a broken image.
		t.Logf("CRI-O lost a TTY's last output (its known defect); smoke runs again (%d of %d): %s", rerun, lostTTYReruns, failedChecks(logs.Stdout))
		code, logs = runSmoke()
	}
	if code != 0 {
		// The whole report is long and the log of a result is cut in the
		// middle: the failed checks come first.
		t.Fatalf("crisp smoke in the image exited %d; failed: %s\n%s", code, failedChecks(logs.Stdout), logs)
	}
	docs, problems, err := report.Decode("crictl logs", strings.NewReader(logs.Stdout))
	if err != nil || len(problems) > 0 || len(docs) != 1 {
		t.Fatalf("the container's output holds %d reports (problems %v, err %v):\n%s", len(docs), problems, err, logs)
	}
	run := docs[0].Run
	if run.Node != e2eNodeName || run.Kind != "smoke" || run.Failed() || run.Count(report.Pass) == 0 {
		t.Errorf("report: node %q kind %q failed %v passed %d; want node %q, a passing smoke", run.Node, run.Kind, run.Failed(), run.Count(report.Pass), e2eNodeName)
	}
}

// failedChecks lists the failed checks of the smoke report in out.
func failedChecks(out string) string {
	docs, _, err := report.Decode("crictl logs", strings.NewReader(out))
	if err != nil {
		return "(no report: " + err.Error() + ")"
	}
	var failed []string
	for _, d := range docs {
		for _, c := range d.Run.Cells {
			if c.Outcome == report.Fail {
				failed = append(failed, c.Check+": "+c.Detail)
			}
		}
	}
	if len(failed) == 0 {
		return "none"
	}
	return strings.Join(failed, "; ")
}

// lostTTYReruns bounds the fresh runs a test gives a runtime whose only
// failure is its known TTY race (CRI-O 1.34): one was not always enough on
// a loaded 2-core machine (twice in a row on 7 December); a real fault
// fails every run.
const lostTTYReruns = 3

// onlyLostTTYOutput says whether every failed check of the report in out
// is a TTY check whose output the runtime cut short.
func onlyLostTTYOutput(out string) bool {
	docs, _, err := report.Decode("crictl logs", strings.NewReader(out))
	if err != nil {
		return false
	}
	failed := 0
	for _, d := range docs {
		for _, c := range d.Run.Cells {
			if c.Outcome != report.Fail {
				continue
			}
			failed++
			if !strings.Contains(c.Detail, "closed the stream before it had copied all of the terminal's output") {
				return false
			}
		}
	}
	return failed > 0
}

// e2eNodeName is what the downward API's spec.nodeName gives in this test.
const e2eNodeName = "e2e-node-1"

// buildImage builds the static binary and the image as `make image` does,
// in dir.
func buildImage(t *testing.T, dir, name, tag string) string {
	t.Helper()
	bin, tar := filepath.Join(dir, "crisp-static"), filepath.Join(dir, "crisp-image.tar")
	build := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w -buildid=", "-o", bin, "./cmd/crisp")
	build.Dir, build.Env = suite.repo, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("static build: %v\n%s", err, out)
	}
	pack := exec.Command("go", "run", "./cmd/crisp-image", "-binary", bin, "-name", name, "-tag", tag, "-o", tar)
	pack.Dir = suite.repo
	if out, err := pack.CombinedOutput(); err != nil {
		t.Fatalf("ociimage: %v\n%s", err, out)
	}
	st, err := os.Stat(tar)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() > 40<<20 {
		t.Errorf("the image is %d bytes; it must stay under 40 MB", st.Size())
	}
	return tar
}

// loadImage puts the OCI image tarball tar (named ref) into the runtime
// and removes it at the end of the test: containerd imports it with ctr;
// CRI-O, which imports nothing, pulls it from the harness's local registry
// after it is pushed there (its registries.conf maps docker.io onto it).
func (h *Harness) loadImage(t *testing.T, tar, ref string) {
	t.Helper()
	if h.spec.kind == crioKind {
		layout := t.TempDir()
		if out, err := exec.Command("tar", "-C", layout, "-xf", tar).CombinedOutput(); err != nil {
			t.Fatalf("unpacking %s: %v\n%s", tar, err, out)
		}
		h.pushToCRIO(t, layout, ref)
		return
	}
	sock := strings.TrimPrefix(h.Endpoint, "unix://")
	if out, err := exec.Command("ctr", "-a", sock, "-n", "k8s.io", "images", "import", tar).CombinedOutput(); err != nil {
		t.Fatalf("ctr images import: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ctr", "-a", sock, "-n", "k8s.io", "images", "rm", ref).CombinedOutput(); err != nil {
			t.Logf("ctr images rm %s: %v\n%s", ref, err, out)
		}
	})
}

// containerConfig is the CRI ContainerConfig (crictl's JSON) of the
// manifest's container c in pod, its command and args passed through fill;
// the downward API gives e2eNodeName and podName. It returns the config and
// the container's name (c's, made unique).
func containerConfig(t *testing.T, h *Harness, pod corev1.PodSpec, c corev1.Container, fill *strings.Replacer, podName string) ([]byte, string) {
	t.Helper()
	var args, command []string
	for _, a := range c.Args {
		args = append(args, fill.Replace(a))
	}
	for _, a := range c.Command {
		command = append(command, fill.Replace(a))
	}
	var envs []map[string]string
	for _, e := range c.Env {
		v := e.Value
		if e.ValueFrom != nil {
			switch {
			case e.ValueFrom.FieldRef == nil:
				t.Fatalf("env %s: only the downward API's spec.nodeName and metadata.name are supplied by this test", e.Name)
			case e.ValueFrom.FieldRef.FieldPath == "spec.nodeName":
				v = e2eNodeName
			case e.ValueFrom.FieldRef.FieldPath == "metadata.name":
				v = podName
			default:
				t.Fatalf("env %s: only the downward API's spec.nodeName and metadata.name are supplied by this test", e.Name)
			}
		}
		envs = append(envs, map[string]string{"key": e.Name, "value": v})
	}
	var mounts []map[string]any
	for _, m := range c.VolumeMounts {
		var host string
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.HostPath != nil {
				host = v.HostPath.Path
			}
		}
		if host != "/run/containerd/containerd.sock" {
			t.Fatalf("volume %s: only the containerd socket's hostPath is mapped by this test, got %q", m.Name, host)
		}
		mounts = append(mounts, map[string]any{"host_path": strings.TrimPrefix(h.Endpoint, "unix://"), "container_path": m.MountPath, "readonly": m.ReadOnly})
	}
	sc := map[string]any{}
	if s := c.SecurityContext; s != nil {
		if s.RunAsUser != nil {
			sc["run_as_user"] = map[string]any{"value": *s.RunAsUser}
		}
		if s.ReadOnlyRootFilesystem != nil {
			sc["readonly_rootfs"] = *s.ReadOnlyRootFilesystem
		}
		if s.AllowPrivilegeEscalation != nil {
			sc["no_new_privs"] = !*s.AllowPrivilegeEscalation
		}
	}
	name := c.Name + "-" + time.Now().Format("150405.000000000")
	image := "docker.io/library/" + c.Image
	if strings.HasPrefix(c.Image, "busybox:") {
		image = h.BusyboxImage // offline: no registry here
	}
	cfg := map[string]any{
		"metadata": map[string]any{"name": strings.ReplaceAll(name, ".", "")},
		"image":    map[string]any{"image": image},
		"command":  command,
		"args":     args,
		"envs":     envs,
		"mounts":   mounts,
		"log_path": strings.ReplaceAll(name, ".", "") + ".log",
		"linux":    map[string]any{"security_context": sc},
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b, strings.ReplaceAll(name, ".", "")
}

// waitExited polls until the container has exited and returns its code.
func (h *Harness) waitExited(t *testing.T, id string, timeout time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		r := h.crictl(t, "inspect", "-o", "go-template", "--template", "{{.status.state}} {{.status.exitCode}}", id)
		state, code, _ := strings.Cut(strings.TrimSpace(r.Stdout), " ")
		if r.ExitCode == 0 && state == "CONTAINER_EXITED" {
			n, err := strconv.Atoi(code)
			if err != nil {
				t.Fatalf("exit code %q: %v", code, err)
			}
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("container %s did not exit within %v: %v", id, timeout, r)
		}
		time.Sleep(500 * time.Millisecond) // polling a container's state: nothing to wait on
	}
}

// pushToCRIO pushes the OCI layout to the harness registry, pulls ref from
// it into CRI-O (which reads no archive) and removes ref at the end of t.
func (h *Harness) pushToCRIO(t *testing.T, layout, ref string) {
	t.Helper()
	push := exec.Command("go", "run", "./scripts/crio/pushlayout", layout, h.Registry)
	push.Dir = suite.repo
	if out, err := push.CombinedOutput(); err != nil {
		t.Fatalf("pushing %s to %s: %v\n%s", ref, h.Registry, err, out)
	}
	if r := h.crictl(t, "pull", ref); r.ExitCode != 0 {
		t.Fatalf("crictl pull %s: %v", ref, r)
	}
	t.Cleanup(func() {
		if r := h.crictl(t, "rmi", ref); r.ExitCode != 0 {
			t.Logf("crictl rmi %s: %v", ref, r)
		}
	})
}
