package containerd

// crisp debug as an attacker in the target's pod sees it: the host way's
// process is no door to the node, a crisp in another PID namespace keeps
// its session, and the debug container's image is named exactly and runs
// under the runtime's default seccomp profile.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// newPtraceSibling starts a busybox container with CAP_SYS_PTRACE in the
// harness's pod (whose containers share one PID namespace).
func (h *Harness) newPtraceSibling(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("sibling-%d", time.Now().UnixNano())
	cfg := map[string]any{
		"metadata": map[string]any{"name": name},
		"image":    map[string]any{"image": h.BusyboxImage},
		"command":  []string{"sleep", "2147483647"},
		"log_path": name + ".log",
		"linux": map[string]any{"security_context": map[string]any{
			"capabilities": map[string]any{"add_capabilities": []string{"SYS_PTRACE"}},
		}},
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sibling.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return h.crictlStart(t, h.Pod, path, h.PodConfig)
}

// A sibling container of the same pod with CAP_SYS_PTRACE finds the host
// way's debug process and goes through /proc/PID/root: it sees the target's
// root, not the node's (a marker file on the node stays out of reach, and
// nothing it writes lands on the node), and the debug process holds the
// target's capabilities and no_new_privs.
func TestCrispDebugHostWayIsNoDoor(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		marker := fmt.Sprintf("crisp-e2e-node-only-%d", time.Now().UnixNano())
		if err := os.WriteFile(filepath.Join("/tmp", marker), []byte("node secret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Remove(filepath.Join("/tmp", marker)) })
		sibling := h.newPtraceSibling(t)
		ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
		defer cancel()
		// A sleep of its own length, to be told from every other.
		secs := strconv.Itoa(600 + int(time.Now().UnixNano()%300))
		debug := h.crispCmd(t, ctx, "debug", "--way", "host", h.Ctr, "--", "sleep", secs)
		var stderr strings.Builder
		debug.Stderr = &stderr
		if err := debug.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			_ = debug.Process.Kill()
			_ = debug.Wait()
		}()
		var pid string
		for pid == "" {
			r := h.crisp(t, "exec", sibling, "--", "sh", "-c", `ps -o pid,args | while read -r p a; do [ "$a" = "sleep `+secs+`" ] && echo $p; done`)
			pid = strings.TrimSpace(r.Stdout)
			if ctx.Err() != nil {
				t.Fatalf("the sibling never saw the debug process: %v; crisp said: %s", r, stderr.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
		script := fmt.Sprintf(`cat /proc/%[1]s/root/tmp/%[2]s; echo x > /proc/%[1]s/root/tmp/%[2]s.pwned; grep -E '^(CapEff|NoNewPrivs)' /proc/%[1]s/status; grep CapEff /proc/1/status; ls /proc/%[1]s/root/`, pid, marker)
		r := h.crisp(t, "exec", sibling, "--", "sh", "-c", script)
		t.Logf("the sibling through /proc/%s/root: %v", pid, r)
		if strings.Contains(r.Stdout, "node secret") {
			t.Errorf("the sibling read a node file through the debug process's root: %v", r)
		}
		if _, err := os.Stat(filepath.Join("/tmp", marker+".pwned")); err == nil {
			_ = os.Remove(filepath.Join("/tmp", marker+".pwned"))
			t.Errorf("the sibling wrote a file on the node through the debug process's root")
		}
		if !strings.Contains(r.Stdout, "NoNewPrivs:\t1") {
			t.Errorf("the debug process lacks no_new_privs: %v", r)
		}
		// The target's own capabilities: in this pod the target is h.Ctr.
		tgt := h.crisp(t, "exec", h.Ctr, "--", "grep", "CapEff", "/proc/self/status")
		if want := strings.TrimSpace(tgt.Stdout); want == "" || !strings.Contains(r.Stdout, want+"\n") {
			t.Errorf("the debug process's CapEff is not the target's (%q): %v", want, r)
		}
	})
}

// A SIGKILL of crisp ends the host way's command within seconds (crisp's
// watcher, on the node, kills the session's process group), and the
// watcher ends too: nothing of the session is left running on the node.
func TestCrispDebugHostWayDiesWithCrisp(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
		defer cancel()
		// A sleep of its own length, to be told from every other.
		secs := strconv.FormatInt(1_000_000+time.Now().UnixNano()%1_000_000_000, 10)
		debug := h.crispCmd(t, ctx, "debug", "--way", "host", h.Ctr, "--", "sleep", secs)
		var stderr bytes.Buffer // read once crisp has been waited for
		debug.Stderr = &stderr
		if err := debug.Start(); err != nil {
			t.Fatal(err)
		}
		waited := false
		defer func() {
			if !waited {
				_ = debug.Process.Kill()
				_ = debug.Wait()
			}
		}()
		var marker int
		for marker == 0 {
			if pids := argvPIDs("sleep", secs); len(pids) == 1 {
				marker = pids[0]
			}
			if ctx.Err() != nil {
				t.Fatalf("the debug command never ran (%v)", ctx.Err())
			}
			time.Sleep(50 * time.Millisecond)
		}
		pgid := strconv.Itoa(marker) // the command leads its process group
		// Should crisp's watcher fail, the command must not outlive the test.
		t.Cleanup(func() {
			for _, pid := range argvPIDs("sleep", secs) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		})
		if g, _ := procGroup(marker); g != marker {
			t.Fatalf("the debug command %d is in process group %d, not its own", marker, g)
		}
		// crisp with WatchFlag and the group: the watcher is up before the
		// command runs (it waits at a gate until then).
		if w := argvPIDs("crisp", "debug", "--internal-watch-session", pgid); len(w) != 1 {
			t.Fatalf("want one watcher of process group %s, found %v", pgid, w)
		}
		if err := debug.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		err := debug.Wait()
		waited = true
		t.Logf("crisp, SIGKILLed: %v; it said: %s", err, stderr.String())

		const bound = 10 * time.Second
		var left []string
		for deadline := time.Now().Add(bound); ; time.Sleep(50 * time.Millisecond) {
			left = nil
			if pids := argvPIDs("sleep", secs); len(pids) > 0 {
				left = append(left, fmt.Sprintf("the debug command %v", pids))
			}
			if pids := argvPIDs("crisp", "debug", "--internal-watch-session", pgid); len(pids) > 0 {
				left = append(left, fmt.Sprintf("the watcher %v", pids))
			}
			if pids := groupPIDs(marker); len(pids) > 0 {
				left = append(left, fmt.Sprintf("processes %v of the session's group", pids))
			}
			if len(left) == 0 || time.Now().After(deadline) {
				break
			}
		}
		if len(left) > 0 {
			t.Errorf("%s after crisp was SIGKILLed: %s", bound, strings.Join(left, "; "))
		}
	})
}

// argvPIDs are the node's processes whose command line is argv exactly
// (a zombie's is empty: an ended process is not found).
func argvPIDs(argv ...string) []int {
	want := strings.Join(argv, "\x00") + "\x00"
	var out []int
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil && string(b) == want {
			if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}

// procGroup is process pid's group, and whether it has ended (a zombie).
func procGroup(pid int) (pgid int, ended bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, true
	}
	// After the command name, which may hold spaces: state, ppid, pgrp.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 3 {
		return 0, true
	}
	pgid, _ = strconv.Atoi(f[2])
	return pgid, f[0] == "Z"
}

// groupPIDs are the live (not zombie) processes of process group pgid.
func groupPIDs(pgid int) []int {
	var out []int
	paths, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range paths {
		pid, err := strconv.Atoi(filepath.Base(p))
		if err != nil {
			continue
		}
		if g, ended := procGroup(pid); g == pgid && !ended {
			out = append(out, pid)
		}
	}
	return out
}

// nameBusybox gives the harness's busybox image another name on the node
// until the test ends, as a tenant's pod can: containerd tags it; CRI-O,
// which imports nothing, pulls it under that name from the harness's
// registry (docker.io maps onto it), where it is pushed under that name.
func (h *Harness) nameBusybox(t *testing.T, name string) {
	t.Helper()
	if h.spec.kind == containerdKind {
		sock := strings.TrimPrefix(h.Endpoint, "unix://")
		if out, err := exec.Command("ctr", "-a", sock, "-n", "k8s.io", "images", "tag", "--force", h.BusyboxImage, name).CombinedOutput(); err != nil {
			t.Fatalf("ctr images tag: %v\n%s", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("ctr", "-a", sock, "-n", "k8s.io", "images", "rm", name).Run() })
		return
	}
	// The harness's images, built again (offline, a second), and only
	// busybox's index entry kept, under the new name.
	dir := t.TempDir()
	tar, layout := filepath.Join(dir, "images.tar"), filepath.Join(dir, "layout")
	if out, err := exec.Command("bash", filepath.Join(suite.repo, "scripts/containerd/mkimages.sh"), tar).CombinedOutput(); err != nil {
		t.Fatalf("mkimages.sh: %v\n%s", err, out)
	}
	if err := os.Mkdir(layout, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tar", "-C", layout, "-xf", tar).CombinedOutput(); err != nil {
		t.Fatalf("unpacking %s: %v\n%s", tar, err, out)
	}
	var index struct {
		SchemaVersion int              `json:"schemaVersion"`
		MediaType     string           `json:"mediaType"`
		Manifests     []map[string]any `json:"manifests"`
	}
	raw, err := os.ReadFile(filepath.Join(layout, "index.json"))
	if err == nil {
		err = json.Unmarshal(raw, &index)
	}
	if err != nil {
		t.Fatalf("the layout's index: %v", err)
	}
	var kept []map[string]any
	for _, m := range index.Manifests {
		if a, _ := m["annotations"].(map[string]any); a != nil && a["io.containerd.image.name"] == h.BusyboxImage {
			a["io.containerd.image.name"] = name
			kept = append(kept, m)
		}
	}
	if len(kept) != 1 {
		t.Fatalf("%s: %d index entries of %s", tar, len(kept), h.BusyboxImage)
	}
	index.Manifests = kept
	if raw, err = json.Marshal(index); err == nil {
		err = os.WriteFile(filepath.Join(layout, "index.json"), raw, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // after the name's removal (cleanups run last first)
		if r := h.crictl(t, "inspecti", h.BusyboxImage); r.ExitCode != 0 {
			t.Errorf("removing %s removed %s too: %v", name, h.BusyboxImage, r)
		}
	})
	// By name CRI-O removes the name only; busybox must stay for the tests
	// after this one.
	h.pushToCRIO(t, layout, name)
}

// Sessions are told apart by their lock, not their PID: a crisp in a PID
// namespace of its own keeps its debug container while another crisp's
// sweep runs, and its command finishes.
func TestCrispDebugSweepSparesOtherPIDNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		skipOrFail(t, "unshare --pid needs root")
	}
	eachRuntime(t, func(t *testing.T, h *Harness) {
		before := h.debugContainers(t)
		ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
		defer cancel()
		args := append([]string{"--pid", "--fork", "--mount-proc", crispBinary(t)},
			h.debugArgs("container", "-i", h.Ctr, "--", "sh", "-c", "echo STARTED; read x; echo FINISHED")...)
		first := exec.CommandContext(ctx, "unshare", args...)
		first.Env = append(cleanEnv(), "CONTAINER_RUNTIME_ENDPOINT="+h.Endpoint, "XDG_CACHE_HOME="+t.TempDir())
		stdin, err := first.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := first.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		first.Stderr = &stderr
		if err := first.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = first.Process.Kill() }() // it may have ended
		lines := bufio.NewScanner(stdout)
		if !lines.Scan() || lines.Text() != "STARTED" {
			t.Fatalf("the first session did not start: %q; crisp said: %s", lines.Text(), stderr.String())
		}
		if r := h.crisp(t, h.debugArgs("container", h.Ctr, "--", "true")...); r.ExitCode != 0 {
			t.Fatalf("the second session: %v", r)
		}
		if _, err := io.WriteString(stdin, "go on\n"); err != nil {
			t.Fatalf("the first session is gone: %v; crisp said: %s", err, stderr.String())
		}
		_ = stdin.Close()
		rest, _ := io.ReadAll(stdout)
		if err := first.Wait(); err != nil || strings.TrimSpace(string(rest)) != "FINISHED" {
			t.Fatalf("the first session was cut short by the second's sweep: %v, output %q; crisp said: %s", err, rest, stderr.String())
		}
		if ids := h.debugContainersSince(t, before); len(ids) != 0 {
			t.Errorf("debug containers left: %v", ids)
		}
	})
}

// With a tenant's decoy whose name contains busybox on the node and no
// crisp default image, debug fails naming the exact image and how to get
// it, and runs nothing (on containerd and CRI-O alike); with --image the
// debug container runs under the runtime's default seccomp profile
// (Seccomp: 2) with the runtime's default capabilities and SYS_PTRACE only.
func TestCrispDebugImageExactAndSeccomp(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		before := h.debugContainers(t)
		const decoy = "docker.io/attacker/busybox-tools:latest"
		h.nameBusybox(t, decoy)
		// containerd's CRI learns of a tag from an event: a moment later.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			r := h.crictl(t, "inspecti", decoy)
			if r.ExitCode == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the decoy is not on the node: %v", r)
			}
		}
		r := h.crisp(t, "debug", "--way", "container", h.Ctr, "--", "true")
		if r.ExitCode != 125 || !strings.Contains(r.Stderr, `image "docker.io/library/busybox:1.36" (crisp's default debug image) is not on the node; pull it first (crisp pull docker.io/library/busybox:1.36)`) {
			t.Errorf("with only a decoy on the node: %v", r)
		}
		if strings.Contains(r.Stderr, "busybox-tools") {
			t.Errorf("crisp debug went for the decoy: %v", r)
		}
		if ids := h.debugContainersSince(t, before); len(ids) != 0 {
			t.Errorf("a debug container was created with only a decoy on the node: %v", ids)
		}
		r = h.crisp(t, h.debugArgs("container", h.Ctr, "--", "grep", "-E", "^(Seccomp|CapEff):", "/proc/self/status")...)
		switch {
		case r.ExitCode != 0:
			t.Fatalf("debug: %v", r)
		case h.spec.kind == crioKind:
			// scripts/crio/build.sh builds CRI-O without its seccomp tag:
			// it applies no profile at all here, RuntimeDefault or not.
			t.Logf("CRI-O here is built without seccomp support: %v", r)
		case !strings.Contains(r.Stdout, "Seccomp:\t2"):
			t.Errorf("the debug container is not under a seccomp filter: %v", r)
		}
		if !strings.Contains(r.Stderr, "debug container from image "+h.BusyboxImage) {
			t.Errorf("stderr does not name the image: %v", r)
		}
		base := h.crisp(t, "exec", h.Ctr, "--", "grep", "CapEff", "/proc/self/status")
		want, err1 := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(base.Stdout), "CapEff:")), 16, 64)
		var got uint64
		var err2 error
		for _, line := range strings.Split(r.Stdout, "\n") {
			if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
				got, err2 = strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			}
		}
		const sysPtrace = 19
		if err1 != nil || err2 != nil || got != want|1<<sysPtrace {
			t.Errorf("CapEff %x, want the runtime's default %x and SYS_PTRACE only (%v, %v)", got, want|1<<sysPtrace, err1, err2)
		}
	})
}
