package containerd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// containerd-up.sh on a harness that is up only reports it: same containerd,
// same env file.
func TestHarnessUpIsIdempotent(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		if env := h.spec.envVar; os.Getenv(env) != "" {
			t.Skipf("the harness was started outside this test binary (%s)", env)
		}
		pidBefore, err := os.ReadFile(filepath.Join(h.Dir, "containerd.pid"))
		if err != nil {
			t.Fatal(err)
		}
		out, err := runScript(h.spec.scriptEnv(h.spec.dir, h.spec.bridge, h.spec.netPrefix), "containerd-up.sh")
		if err != nil || !strings.Contains(string(out), "already up") {
			t.Fatalf("containerd-up.sh on a running harness: %v\n%s", err, out)
		}
		pidAfter, _ := os.ReadFile(filepath.Join(h.Dir, "containerd.pid"))
		if string(pidAfter) != string(pidBefore) {
			t.Errorf("containerd-up.sh restarted containerd: pid %s -> %s", pidBefore, pidAfter)
		}
		if _, err := loadHarness(filepath.Join(h.Dir, "env"), h.spec); err != nil {
			t.Errorf("env file after a second containerd-up.sh: %v", err)
		}
	})
}

// No registry is reachable, and none may be contacted: a pull of an image
// that was not imported fails on the harness's loopback proxy.
func TestRegistryPullsStayOnHost(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		r := h.crictl(t, "pull", "registry.k8s.io/pause:3.9")
		if r.ExitCode == 0 || !strings.Contains(r.Stderr, "127.0.0.1:9") {
			t.Fatalf("crictl pull of a remote image: want a failure at the loopback proxy 127.0.0.1:9; got %v", r)
		}
	})
}
