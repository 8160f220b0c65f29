package debug

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// confinedEnv makes the test binary a target process: "strict" or
// "filter" puts it under that seccomp mode, "plain" under none. It says
// "ready" on stdout, then blocks reading stdin until the test kills it.
const confinedEnv = "CRISP_TEST_CONFINED"

// init, not TestMain: an init function runs on the main thread, the one
// /proc/PID/status describes, and seccomp is per thread.
func init() {
	mode := os.Getenv(confinedEnv)
	if mode == "" {
		return
	}
	switch mode {
	case "filter":
		allow := []unix.SockFilter{{Code: unix.BPF_RET | unix.BPF_K, K: unix.SECCOMP_RET_ALLOW}}
		prog := unix.SockFprog{Len: uint16(len(allow)), Filter: &allow[0]}
		if unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != nil ||
			unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)), 0, 0) != nil {
			os.Exit(3)
		}
	case "strict":
		// Raw: the runtime's own work on the way out of a syscall could
		// make calls strict mode kills for.
		if _, _, errno := unix.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_STRICT, 0); errno != 0 {
			os.Exit(3)
		}
	}
	// Raw calls from here on: under strict seccomp read and write are all
	// this thread may make.
	ready := []byte("ready\n")
	_, _, _ = unix.RawSyscall(unix.SYS_WRITE, 1, uintptr(unsafe.Pointer(&ready[0])), uintptr(len(ready)))
	var b [1]byte
	for {
		_, _, _ = unix.RawSyscall(unix.SYS_READ, 0, uintptr(unsafe.Pointer(&b[0])), 1)
	}
}

// confinedTarget starts the test binary as a target in mode, in a user
// namespace of its own if newUser, and returns its PID once it is ready.
func confinedTarget(t *testing.T, mode string, newUser bool) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), confinedEnv+"="+mode)
	// Should the test die first: a target under strict seccomp cannot exit
	// by itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if newUser {
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWUSER
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		if newUser && os.Geteuid() != 0 {
			t.Skipf("a user namespace: %v", err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = stdin.Close() // the pipe's write end, once it no longer matters
	})
	// The line comes after seccomp is set; EOF if the child failed.
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
		t.Fatalf("the %s target did not get ready: %q, %v", mode, line, err)
	}
	return cmd.Process.Pid
}

// The host way refuses a target under strict seccomp, under a seccomp
// filter, or in a user namespace of its own: the process it would start
// could not be held to what the target holds. An unconfined target passes
// those checks (and fails later, on the missing tool given here).
func TestHostWayRefusesWhatItCannotMatch(t *testing.T) {
	const tool = "/nonexistent/busybox"
	for _, tc := range []struct {
		name    string
		mode    string
		newUser bool
		refusal string // "": not refused
	}{
		{"strict seccomp", "strict", false, "runs under strict seccomp"},
		{"seccomp filter", "filter", false, "runs under a seccomp filter"},
		{"own user namespace", "plain", true, "runs in a user namespace of its own"},
		{"unconfined", "plain", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pid := confinedTarget(t, tc.mode, tc.newUser)
			e, err := openEntry(pid, tool)
			if e != nil {
				e.close()
			}
			switch {
			case err == nil:
				t.Fatal("openEntry succeeded with a tool that does not exist")
			case tc.refusal == "" && !errors.Is(err, os.ErrNotExist):
				t.Errorf("an unconfined target: %v, want it to get as far as the missing tool", err)
			case tc.refusal != "" && !strings.Contains(err.Error(), tc.refusal):
				t.Errorf("error %q, want the refusal %q", err, tc.refusal)
			}
		})
	}
}
