package containerd

import (
	"os"
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

// crisp exec -it under a real terminal: the size arrives, a resize follows,
// the remote exit code comes back and the terminal is restored.
func TestCrispExecTTY(t *testing.T) {
	h := suiteHarness(t)
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) {
			ptmx, tty, err := pty.Open()
			if err != nil {
				t.Fatalf("opening a pty: %v", err)
			}
			defer ptmx.Close()
			if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 41, Cols: 101}); err != nil {
				t.Fatal(err)
			}
			before, err := term.SaveState(ptmx.Fd())
			if err != nil {
				t.Fatal(err)
			}
			cmd := crispCmd(t, t.Context(), "exec", "-it", "--transport", tr, h.Ctr, "--", "sh")
			cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			tty.Close()
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
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			defer func() {
				cmd.Process.Kill()
				<-done
				ptmx.Close()
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
			var waitErr error
			select {
			case waitErr = <-done:
				done <- waitErr // for the deferred clean-up
			case <-time.After(20 * time.Second):
				t.Fatalf("crisp exec -it did not end after `exit 3`; terminal output:\n%q", out.String())
			}
			if code := cmd.ProcessState.ExitCode(); code != 3 {
				t.Errorf("crisp exec -it --transport %s: exit %d (%v), want 3; terminal output:\n%q", tr, code, waitErr, out.String())
			}
			after, err := term.SaveState(ptmx.Fd())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(before, after) {
				t.Errorf("the terminal was not restored: %+v before, %+v after", before, after)
			}
		})
	}
}
