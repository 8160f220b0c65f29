package containerd

import (
	"bufio"
	"context"
	"strings"
	"testing"
	"time"
)

// follower is a crisp that keeps printing (logs -f), its stdout read line
// by line. Unlike startBackground it checks no goroutine leaks of its own,
// so that both runtimes' subtests may follow at once.
type follower struct {
	lines chan string   // stdout, line by line; closed at its end
	done  chan struct{} // closed once crisp has exited
	err   error         // crisp's exit, once done
	seen  []string
}

// follow starts crisp with args; it is killed and waited for at the end of
// the test.
func (h *Harness) follow(t *testing.T, args ...string) *follower {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := h.crispCmd(t, ctx, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f := &follower{lines: make(chan string, 1024), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case f.lines <- sc.Text():
			case <-ctx.Done(): // the test is over: nobody reads
			}
		}
		close(f.lines)
		f.err = cmd.Wait()
	}()
	t.Cleanup(func() {
		cancel()
		<-f.done
	})
	return f
}

// waitLine reads lines until one is want; crisp's end or timeout fails t.
func (f *follower) waitLine(t *testing.T, want string, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-f.lines:
			if !ok {
				<-f.done
				t.Fatalf("crisp ended (%v) before printing %q; it printed:\n%s", f.err, want, f.tail())
			}
			f.seen = append(f.seen, line)
			if line == want {
				return
			}
		case <-deadline:
			t.Fatalf("crisp printed no %q within %v; it printed:\n%s", want, timeout, f.tail())
		}
	}
}

// waitExit requires crisp to end by itself, successfully, within timeout.
func (f *follower) waitExit(t *testing.T, timeout time.Duration) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case _, ok := <-f.lines:
			if !ok {
				<-f.done
				if f.err != nil {
					t.Errorf("crisp: %v, want exit 0", f.err)
				}
				return
			}
		case <-deadline:
			t.Fatalf("crisp still runs after %v", timeout)
		}
	}
}

func (f *follower) tail() string {
	if len(f.seen) > 20 {
		return "...\n" + strings.Join(f.seen[len(f.seen)-20:], "\n")
	}
	return strings.Join(f.seen, "\n")
}
