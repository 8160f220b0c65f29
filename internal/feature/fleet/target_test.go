package fleet

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// busyboxPath returns a PATH of busybox applets (the target image's
// tools), or skips: the target's script is busybox sh.
func busyboxPath(t *testing.T) string {
	t.Helper()
	bb, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("busybox is not installed (scripts/deps.sh installs busybox-static)")
	}
	dir := t.TempDir()
	for _, applet := range []string{"sh", "nc", "yes", "head", "sleep", "cat", "echo", "pidof", "kill"} {
		if err := os.Symlink(bb, filepath.Join(dir, applet)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// script is a target's script running on this host, in a process group
// of its own (nc and the printing loop are its children).
type script struct {
	cmd  *exec.Cmd
	out  *os.File // a file, not a pipe: Wait must not wait for the children holding it
	done chan error
}

// log is what the script printed so far.
func (s *script) log() string {
	b, _ := os.ReadFile(s.out.Name())
	return string(b)
}

func startScript(t *testing.T, path string, command []string) *script {
	t.Helper()
	s := &script{cmd: exec.Command(filepath.Join(path, command[0]), command[1:]...), done: make(chan error, 1)}
	s.cmd.Env = []string{"PATH=" + path}
	out, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = out.Close() })
	s.out = out
	s.cmd.Stdout, s.cmd.Stderr = out, out
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL) // the group this test started, whatever is left of it
		// Killed on purpose: its exit status says nothing.
		<-s.done //nolint:errcheck
	})
	return s
}

// echoes sends a line to port and wants it back.
func echoes(port int) error {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }() // only the echo mattered
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, "crisp\n"); err != nil {
		return err
	}
	got := make([]byte, 6)
	if _, err := io.ReadFull(c, got); err != nil {
		return err
	}
	if string(got) != "crisp\n" {
		return fmt.Errorf("got %q back", got)
	}
	return nil
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lis.Close() }() // only its number was wanted
	return lis.Addr().(*net.TCPAddr).Port
}

// Two crisp pods on one node share its network (host network). The second
// target's echo server cannot listen on a port the first holds: that
// target must end at once and say so, so that its startup probe never
// passes and its smoke never runs against the other's server (which may go
// away mid-run: "sent 64 KiB to port 7777, 0 bytes came back: EOF").
func TestTargetOnATakenPortEndsAndSaysSo(t *testing.T) {
	path := busyboxPath(t)
	port := freeTCPPort(t)
	r, _ := runner(nil, time.Minute)
	first := startScript(t, path, r.PodFor(Placement{Node: "node-a", Port: port}, "1m").Spec.InitContainers[0].Command)
	deadline := time.Now().Add(5 * time.Second)
	for echoes(port) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("the first target does not echo on port %d: %v\n%s", port, echoes(port), first.log())
		}
		time.Sleep(20 * time.Millisecond) // waiting for busybox to listen
	}

	r.RunID = "def456"
	second := startScript(t, path, r.PodFor(Placement{Node: "node-a", Port: port}, "1m").Spec.InitContainers[0].Command)
	select {
	case err := <-second.done:
		second.done <- err // for the clean-up
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitPortLost {
			t.Errorf("the second target ended with %v, want exit status %d", err, exitPortLost)
		}
		want := fmt.Sprintf("crisp fleet target: the echo server on port %d ended", port)
		if !strings.Contains(second.log(), want) {
			t.Errorf("its log does not say why: %q, want %q", second.log(), want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the second target kept running without its echo server on port %d; its log:\n%s", port, second.log())
	}
	if err := echoes(port); err != nil {
		t.Errorf("the first target stopped echoing: %v", err)
	}
}

// The startup probe runs inside the target: a TCP probe would pass on any
// process of the node listening on the port.
func TestTargetStartupProbeLooksInside(t *testing.T) {
	r, _ := runner(nil, time.Minute)
	p := r.PodFor(Placement{Node: "node-a", Port: 23456}, "1m").Spec.InitContainers[0]
	if p.StartupProbe == nil || p.StartupProbe.Exec == nil || p.StartupProbe.TCPSocket != nil {
		t.Fatalf("startup probe %+v: want an exec probe", p.StartupProbe)
	}
	if p.TerminationMessagePolicy != "FallbackToLogsOnError" {
		t.Errorf("termination message policy %q: the target's last words say why it ended", p.TerminationMessagePolicy)
	}
}
