package containerd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Each harness runs the containerd it is named after (a PATH mistake would
// run Debian's 1.6 twice), and that containerd runs its own runc shim: the
// shims serving the harness's socket are the binaries of its folder
// (.tools/containerd2/bin for 2.4), not Debian's 1.6 shim.
func TestHarnessRunsItsOwnContainerd(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		r := h.crictl(t, "version")
		if r.ExitCode != 0 || !strings.Contains(r.Stdout, "RuntimeVersion:  "+h.spec.version) {
			t.Fatalf("crictl version on %s: want RuntimeVersion %s*; got %v", h.Name, h.spec.version, r)
		}
		if os.Getenv(h.spec.envVar) != "" {
			return // started by somebody else, from binaries of their choosing
		}
		sock := strings.TrimPrefix(h.Endpoint, "unix://")
		want, err := exec.LookPath("containerd-shim-runc-v2") // Debian's, for 1.6
		if h.spec.binDir != "" {
			want, err = filepath.Join(suite.repo, h.spec.binDir, "containerd-shim-runc-v2"), nil
		}
		if err == nil {
			want, err = filepath.EvalSymlinks(want) // /proc/PID/exe is the real path
		}
		if err != nil {
			t.Fatal(err)
		}
		shims := 0
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, p := range procs {
			data, err := os.ReadFile(p)
			if err != nil {
				continue // the process has gone
			}
			args := strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
			if !strings.HasSuffix(args[0], "containerd-shim-runc-v2") || !strings.Contains(string(data), "\x00-address\x00"+sock+"\x00") {
				continue
			}
			exe, err := os.Readlink(filepath.Join(filepath.Dir(p), "exe"))
			if err != nil {
				continue
			}
			shims++
			if exe != want {
				t.Errorf("%s: a shim of %s runs %s, want %s", h.Name, sock, exe, want)
			}
		}
		if shims == 0 {
			t.Errorf("%s: no containerd-shim-runc-v2 serves %s (the harness's pods run in shims)", h.Name, sock)
		}
	})
}

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
