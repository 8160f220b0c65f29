package debug

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/session"
	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// hostHelperEnv makes the test binary a crisp running the host way into
// the process it names, with the command in hostHelperCmdEnv: a process
// the test can SIGKILL.
const (
	hostHelperEnv    = "CRISP_TEST_HOST_WAY_TARGET"
	hostHelperCmdEnv = "CRISP_TEST_HOST_WAY_CMD"
	watchHelperEnv   = "CRISP_TEST_WATCH_PGID"
)

// watchHelper is the test binary as a host-way session's watcher.
func watchHelper(pgid string) int {
	n, err := strconv.Atoi(pgid)
	if err != nil {
		return 2
	}
	if err := Watch(os.Stdin, n); err != nil {
		_, _ = fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// testWatcher starts the test binary as a watcher.
func testWatcher(pgid int) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, hostHelperEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d", watchHelperEnv, pgid))
	return cmd
}

// hostWayHelper is the helper's body; it returns the exit status.
func hostWayHelper(target string) int {
	pid, err := strconv.Atoi(target)
	if err != nil {
		return 2
	}
	tool, _ := exec.LookPath("busybox")
	rn := Runner{Deps: session.Deps{Streams: cmdutil.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}}, Watcher: testWatcher}
	err = rn.runHost(context.Background(), &hostPlan{pid: pid, tool: tool}, Request{Command: strings.Fields(os.Getenv(hostHelperCmdEnv))})
	if err != nil {
		_, _ = fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// fakeTarget starts a container-like process: busybox sleep as PID 1 of
// its own PID, mount, UTS, IPC and network namespaces, chrooted into a
// folder of its own (with a marker file, and the node's /proc mounted for
// exec through /proc/self/fd), with bounding set bnd and credentials cred.
func fakeTarget(t *testing.T, bnd uint64, cred *syscall.Credential) (pid int, root string) {
	t.Helper()
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("no busybox on this machine")
	}
	if err := requireStatic(mustOpen(t, busybox)); err != nil {
		t.Skipf("%s: %v", busybox, err)
	}
	root = t.TempDir()
	for _, d := range []string{"bin", "proc", "etc"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(busybox)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "bin", "busybox"), data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "marker"), []byte("target\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("proc", filepath.Join(root, "proc"), "proc", 0, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(filepath.Join(root, "proc"), unix.MNT_DETACH) })

	cmd := exec.Command("/bin/busybox", "sleep", "1000")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Chroot: root, Credential: cred,
		Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWUTS | syscall.CLONE_NEWIPC | syscall.CLONE_NEWNET,
	}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: its bounding set is the target's
		for c := 0; c <= lastCap(); c++ {
			if bnd&(1<<c) == 0 {
				if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
					started <- err
					return
				}
			}
		}
		started <- cmd.Start()
	}()
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd.Process.Pid, root
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// statusField is a field of /proc/PID/status.
func statusField(t *testing.T, pid int, key string) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %s in /proc/%d/status", key, pid)
	return ""
}

// children are the child processes of pid.
func children(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, p := range tasks {
		b, _ := os.ReadFile(p)
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// hostWait bounds the waits of the host way's tests; a guard, not a
// measurement.
const hostWait = 20 * time.Second

// The process the host way puts into a target holds no more than the
// target, seen from outside: its uid, CapEff and CapBnd are the target's,
// no_new_privs is set, its namespaces are the target's, /proc/PID/root is
// the target's root (not the node's: no /etc/shadow there), it holds no
// file of the node; and when crisp is SIGKILLed it ends.
func TestHostWayHoldsNoMoreThanTarget(t *testing.T) {
	testkit.RequireRoot(t, "entering namespaces")
	const chown, kill = 0, 5
	for _, tc := range []struct {
		name string
		bnd  uint64
		cred *syscall.Credential
	}{
		{"root with two capabilities", 1<<chown | 1<<kill, nil},
		{"nobody", 1<<chown | 1<<kill, &syscall.Credential{Uid: 65534, Gid: 65534}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, root := fakeTarget(t, tc.bnd, tc.cred)
			helper := exec.Command(os.Args[0], "-test.run=^$")
			helper.Env = append(os.Environ(), hostHelperEnv+"="+strconv.Itoa(target), hostHelperCmdEnv+"=sleep 1000")
			var stderr bytes.Buffer
			helper.Stdout, helper.Stderr = io.Discard, &stderr
			if err := helper.Start(); err != nil {
				t.Fatal(err)
			}
			ended := make(chan struct{})
			go func() {
				_ = helper.Wait()
				close(ended)
			}()
			defer func() {
				_ = helper.Process.Kill()
				<-ended
			}()
			var debugPID int
			for deadline := time.Now().Add(hostWait); debugPID == 0; time.Sleep(10 * time.Millisecond) {
				for _, c := range children(helper.Process.Pid) {
					if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", c)); string(comm) == "sleep\n" {
						debugPID = c
					}
				}
				select {
				case <-ended:
					t.Fatalf("the host way ended: %s", stderr.String())
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("no debug process within %s: %s", hostWait, stderr.String())
				}
			}

			for _, key := range []string{"Uid", "Gid", "CapEff", "CapPrm", "CapBnd", "CapAmb"} {
				if got, want := statusField(t, debugPID, key), statusField(t, target, key); got != want {
					t.Errorf("%s: debug process %s, target %s", key, got, want)
				}
			}
			if got := statusField(t, debugPID, "NoNewPrivs"); got != "1" {
				t.Errorf("NoNewPrivs %s, want 1", got)
			}
			for _, ns := range []string{"pid", "mnt", "net", "ipc", "uts"} {
				got, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", debugPID, ns))
				want, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", target, ns))
				if got != want || got == "" {
					t.Errorf("%s namespace %q, target's %q", ns, got, want)
				}
			}
			var droot, troot unix.Stat_t
			if err := unix.Stat(fmt.Sprintf("/proc/%d/root", debugPID), &droot); err != nil {
				t.Fatal(err)
			}
			if err := unix.Stat(root, &troot); err != nil {
				t.Fatal(err)
			}
			if droot.Dev != troot.Dev || droot.Ino != troot.Ino {
				t.Errorf("/proc/%d/root is not the target's root", debugPID)
			}
			if _, err := os.Stat(fmt.Sprintf("/proc/%d/root/etc/shadow", debugPID)); err == nil {
				t.Errorf("the node's /etc/shadow is reachable through /proc/%d/root", debugPID)
			}
			fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", debugPID))
			for _, fd := range fds {
				l, _ := os.Readlink(fd)
				if strings.HasPrefix(l, "/") && !strings.HasPrefix(l, "/memfd:crisp-debug-tool") {
					t.Errorf("the debug process holds a file of the node: %s -> %s", fd, l)
				}
			}

			// kill -9 of crisp ends the debug process (it stays a zombie
			// at most: the target's PID 1, busybox sleep, reaps nothing).
			if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(hostWait); ; time.Sleep(10 * time.Millisecond) {
				st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", debugPID))
				if err != nil || strings.Contains(string(st), ") Z ") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the debug process %d still runs %s after crisp was killed", debugPID, hostWait)
				}
			}
		})
	}
}
