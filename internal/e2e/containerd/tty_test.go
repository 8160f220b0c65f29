package containerd

import (
	"os"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/moby/term"
)

// ptyOutput collects what a pty's master side reads.
type ptyOutput struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (o *ptyOutput) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// waitFor writes input to the pty until the output holds want (sent again on
// every try: the first may race the remote shell's start or a resize).
func (o *ptyOutput) waitFor(t *testing.T, ptmx *os.File, input, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(o.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q within %v after sending %q; terminal output:\n%q", want, timeout, input, o.String())
		}
		if _, err := ptmx.WriteString(input); err != nil {
			t.Fatalf("writing to the pty: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// ttyRun is what runTTYSession saw.
type ttyRun struct {
	exitCode int
	restored bool   // the terminal's settings were as before at the end
	output   string // everything the terminal showed
}

// runTTYSession runs cmd (an `exec -it ... sh`) on a new pty sized 41x101:
// checks that the remote shell sees that size, resizes to 52x123 and checks
// again, then sends `exit 3` and waits for cmd to end.
func runTTYSession(t *testing.T, cmd *exec.Cmd) ttyRun {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("opening a pty: %v", err)
	}
	defer func() { _ = ptmx.Close() }() // closed again below; the second close errs
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 41, Cols: 101}); err != nil {
		t.Fatal(err)
	}
	before, err := term.SaveState(ptmx.Fd())
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = tty.Close() // the child holds its own copy
	out := &ptyOutput{}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			out.mu.Lock()
			out.buf.Write(b[:n])
			out.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	// Closed once cmd has ended; its exit code is read from cmd.ProcessState.
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	defer func() {
		_ = cmd.Process.Kill() // it may have exited already
		<-done
		_ = ptmx.Close() // ends the reader
		wg.Wait()
	}()

	out.waitFor(t, ptmx, "stty size\r", "41 101", 20*time.Second)
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 52, Cols: 123}); err != nil {
		t.Fatal(err)
	}
	out.waitFor(t, ptmx, "stty size\r", "52 123", 20*time.Second)
	if _, err := ptmx.WriteString("exit 3\r"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("%v did not end after `exit 3`; terminal output:\n%q", cmd.Args, out.String())
	}
	after, err := term.SaveState(ptmx.Fd())
	if err != nil {
		t.Fatal(err)
	}
	return ttyRun{exitCode: cmd.ProcessState.ExitCode(), restored: reflect.DeepEqual(before, after), output: out.String()}
}

// crisp exec -it under a real terminal: the size arrives, a resize follows,
// the remote exit code comes back and the terminal is restored.
func TestCrispExecTTY(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		for _, tr := range transports {
			t.Run(tr, func(t *testing.T) {
				r := runTTYSession(t, h.crispCmd(t, t.Context(), "exec", "-it", "--transport", tr, h.Ctr, "--", "sh"))
				if r.exitCode != 3 {
					t.Errorf("crisp exec -it --transport %s: exit %d, want 3; terminal output:\n%q", tr, r.exitCode, r.output)
				}
				if !r.restored {
					t.Errorf("crisp exec -it --transport %s: the terminal was not restored", tr)
				}
			})
		}
	})
}

// crictl exec -it (SPDY) carries the size and the resize too, and loses the
// exit code as it does without a terminal (3 becomes 1).
func TestCrictlExecTTY(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		r := runTTYSession(t, h.crictlCmd(t, t.Context(), "exec", "-it", h.Ctr, "sh"))
		if r.exitCode != 1 {
			t.Errorf("crictl exec -it: exit %d; crictl v1.37.0 turns the remote 3 into 1: update the matrix", r.exitCode)
		}
		if !r.restored {
			t.Errorf("crictl exec -it: the terminal was not restored")
		}
	})
}
