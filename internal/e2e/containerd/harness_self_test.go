package containerd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Each harness runs the runtime it is named after (a PATH mistake would
// run Debian's 1.6 twice), and that containerd runs its own runc shim: the
// shims serving the harness's socket are the binaries of its folder
// (.tools/containerd2/bin for 2.4), not Debian's 1.6 shim. The CRI-O
// harness runs the crio of .tools/crio/bin, and its containers are
// monitored by conmons of its own folder.
func TestHarnessRunsItsOwnContainerd(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		r := h.crictl(t, "version")
		if r.ExitCode != 0 || !strings.Contains(r.Stdout, "RuntimeVersion:  "+h.spec.version) {
			t.Fatalf("crictl version on %s: want RuntimeVersion %s*; got %v", h.Name, h.spec.version, r)
		}
		if os.Getenv(h.spec.envVar) != "" {
			return // started by somebody else, from binaries of their choosing
		}
		if h.spec.kind == crioKind {
			checkCRIOBinaries(t, h)
			return
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
		for _, args := range processes(t) {
			if !strings.HasSuffix(args.argv[0], "containerd-shim-runc-v2") || !strings.Contains(args.raw, "\x00-address\x00"+sock+"\x00") {
				continue
			}
			shims++
			if args.exe != want {
				t.Errorf("%s: a shim of %s runs %s, want %s", h.Name, sock, args.exe, want)
			}
		}
		if shims == 0 {
			t.Errorf("%s: no containerd-shim-runc-v2 serves %s (the harness's pods run in shims)", h.Name, sock)
		}
	})
}

// checkCRIOBinaries: the harness's crio is the one scripts/crio/build.sh
// built, and conmons of its folder monitor its containers.
func checkCRIOBinaries(t *testing.T, h *Harness) {
	t.Helper()
	want, err := filepath.EvalSymlinks(filepath.Join(suite.repo, h.spec.binDir, "crio"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := os.ReadFile(filepath.Join(h.Dir, h.spec.kind.pidFile))
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Readlink(filepath.Join("/proc", strings.TrimSpace(string(pid)), "exe"))
	if err != nil || exe != want {
		t.Errorf("%s: the harness's crio (pid %s) runs %q (%v), want %s", h.Name, strings.TrimSpace(string(pid)), exe, err, want)
	}
	conmons := 0
	for _, p := range processes(t) {
		if filepath.Base(p.exe) == "conmon" && strings.Contains(p.raw, "\x00"+h.Dir+"/") {
			conmons++
		}
	}
	if conmons == 0 {
		t.Errorf("%s: no conmon monitors a container of %s", h.Name, h.Dir)
	}
}

type process struct {
	argv []string
	raw  string // the command line, NUL-separated
	exe  string
}

// processes lists the processes that can be read now.
func processes(t *testing.T) []process {
	t.Helper()
	var out []process
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err != nil || len(data) == 0 {
			continue // the process has gone, or is a kernel thread
		}
		exe, err := os.Readlink(filepath.Join(filepath.Dir(p), "exe"))
		if err != nil {
			continue
		}
		out = append(out, process{argv: strings.Split(strings.TrimRight(string(data), "\x00"), "\x00"), raw: string(data), exe: exe})
	}
	return out
}

// The up script on a harness that is up only reports it: same runtime, same
// env file.
func TestHarnessUpIsIdempotent(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		if env := h.spec.envVar; os.Getenv(env) != "" {
			t.Skipf("the harness was started outside this test binary (%s)", env)
		}
		pidBefore, err := os.ReadFile(filepath.Join(h.Dir, h.spec.kind.pidFile))
		if err != nil {
			t.Fatal(err)
		}
		up := h.spec.kind.up
		out, err := runScript(h.spec.scriptEnv(h.spec.dir, h.spec.bridge, h.spec.netPrefix), up)
		if err != nil || !strings.Contains(string(out), "already up") {
			t.Fatalf("%s on a running harness: %v\n%s", up, err, out)
		}
		pidAfter, _ := os.ReadFile(filepath.Join(h.Dir, h.spec.kind.pidFile))
		if string(pidAfter) != string(pidBefore) {
			t.Errorf("%s restarted the runtime: pid %s -> %s", up, pidBefore, pidAfter)
		}
		if _, err := loadHarness(filepath.Join(h.Dir, "env"), h.spec); err != nil {
			t.Errorf("env file after a second %s: %v", up, err)
		}
	})
}

// No registry is reachable, and none may be contacted: a pull of an image
// from a registry no harness knows fails on the harness's loopback proxy
// (the CRI-O harness maps the test images' registries onto its local one).
func TestRegistryPullsStayOnHost(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		r := h.crictl(t, "pull", "quay.io/crisp-e2e/absent:1")
		if r.ExitCode == 0 || !strings.Contains(r.Stderr, "127.0.0.1:9") {
			t.Fatalf("crictl pull of a remote image: want a failure at the loopback proxy 127.0.0.1:9; got %v", r)
		}
	})
}

// Every slot's harnesses have folders, bridges and networks of their own:
// no two harnesses of any slots share one, and every bridge name fits
// Linux's 15 bytes. (Runs without root: names only.)
func TestSlotsNeverShareAName(t *testing.T) {
	seen := map[string]string{}
	claim := func(what, name, owner string) {
		if prev, ok := seen[what+" "+name]; ok {
			t.Errorf("%s %s: both %s and %s", what, name, prev, owner)
		}
		seen[what+" "+name] = owner
	}
	for slot := range harnessSlots {
		for _, orig := range runtimeSpecs {
			s := *orig
			s.inSlot(slot)
			owner := fmt.Sprintf("%s in slot %d", s.name, slot)
			names := []tlsNames{{dir: s.dir, bridge: s.bridge, netPrefix: s.netPrefix}}
			if s.tls.dir != "" {
				names = append(names, s.tls)
			}
			for _, n := range names {
				claim("folder", n.dir, owner)
				claim("bridge", n.bridge, owner)
				claim("network", n.netPrefix, owner)
				if len(n.bridge) > 15 {
					t.Errorf("%s: bridge %q is longer than 15 bytes", owner, n.bridge)
				}
			}
		}
	}
}
