package containerd

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPodsKeepTheirNetworkWhenCRIOStarts: CRI-O, when it starts,
// garbage-collects every CNI attachment cached host-wide
// (/var/lib/cni/results) under the names of its networks that is not one of
// its own pods: CNI DEL, which deletes the pod's interface. The harnesses
// once all named their CNI network "crisp", and a CRI-O starting after
// containerd 2.4's harness took that pod's interface away (containerd 1.6
// caches no network namespace, so only its address was released): the host
// then saw "no route to host" for the pod's address for good. Each harness
// now names its network after its folder. The test starts CRI-O again, as
// its harness does beside the others, and every pod must still answer on
// its bridge address.
func TestPodsKeepTheirNetworkWhenCRIOStarts(t *testing.T) {
	hs := harnesses(t)
	var crio *Harness
	for _, h := range hs {
		if h.spec.kind == crioKind {
			crio = h
		}
	}
	if crio == nil {
		t.Fatal("no CRI-O harness in runtimeSpecs")
	}
	restartCRIO(t, crio)
	for _, h := range hs {
		t.Run(h.Name, func(t *testing.T) {
			body, err := httpGet(t, fmt.Sprintf("http://%s:%d/", h.PodIP, h.HTTPDPort), 30*time.Second)
			if err != nil || !strings.Contains(body, "crisp busybox httpd") {
				t.Fatalf("after CRI-O started again, GET the pod's httpd at %s:%d: %v, body %q", h.PodIP, h.HTTPDPort, err, body)
			}
		})
	}
}

// restartCRIO stops h's crio by the PID in its pid file and starts it again
// with the same command line and environment (its pods and containers, held
// by conmon, carry on), writing the new PID where scripts/crio/down.sh looks.
func restartCRIO(t *testing.T, h *Harness) {
	t.Helper()
	pidFile := filepath.Join(h.Dir, crioKind.pidFile)
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %v", pidFile, err)
	}
	argv, err1 := procStrings(pid, "cmdline")
	env, err2 := procStrings(pid, "environ")
	if err1 != nil || err2 != nil || len(argv) == 0 || filepath.Base(argv[0]) != "crio" {
		t.Fatalf("pid %d (%s) is not a crio to restart: %v %v %q", pid, pidFile, err1, err2, argv)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !waitGone(pid, time.Minute) {
		t.Fatalf("crio (pid %d) still runs a minute after SIGTERM", pid)
	}
	logFile, err := os.OpenFile(h.Log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = logFile.Close() }() // crio holds its own descriptor
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Its own session, as up.sh starts it: it outlives the test, and
	// scripts/crio/down.sh stops it by PID.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait() }() // reaps it, should it end before the test binary
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for r := h.crictl(t, "version"); r.ExitCode != 0; r = h.crictl(t, "version") {
		if time.Now().After(deadline) {
			t.Fatalf("crio did not answer a minute after its restart: %v", r)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// procStrings reads /proc/PID/NAME's NUL-separated strings.
func procStrings(pid int, name string) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, name))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0}) {
		out = append(out, string(f))
	}
	return out, nil
}

// waitGone waits until pid has exited (gone, or a zombie its parent has not
// reaped yet).
func waitGone(pid int, timeout time.Duration) bool {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		// "PID (comm) STATE ...": the state follows the last ')'.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && bytes.HasPrefix(bytes.TrimSpace(stat[i+1:]), []byte("Z")) {
			return true
		}
	}
	return false
}
