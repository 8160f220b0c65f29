package containerd

import (
	"bufio"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Background is a command running alongside a test (port-forward, attach):
// its stdout and stderr lines are collected, and it is killed and waited
// for at the end of the test.
type Background struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	added chan struct{} // signalled on every new line
	done  chan struct{} // closed when the command has exited
	err   error
}

// startBackground starts cmd (its Stdout/Stderr must be unset).
func startBackground(t testing.TB, cmd *exec.Cmd) *Background {
	t.Helper()
	b := &Background{cmd: cmd, added: make(chan struct{}, 1), done: make(chan struct{})}
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %v: %v", cmd.Args, err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			b.mu.Lock()
			b.lines = append(b.lines, sc.Text())
			b.mu.Unlock()
			select {
			case b.added <- struct{}{}:
			default:
			}
		}
	}()
	go func() {
		defer wg.Done()
		err := cmd.Wait()
		_ = pw.Close() // ends the scanner; a pipe's writer closes without error
		b.mu.Lock()
		b.err = err
		b.mu.Unlock()
		close(b.done)
	}()
	t.Cleanup(func() {
		if cmd.Process != nil {
			_ = cmd.Process.Kill() // it may have exited already
		}
		wg.Wait() // both goroutines and exec's copy into pw have ended
		if t.Failed() {
			t.Logf("%v output:\n%s", cmd.Args, b.Output())
		}
	})
	return b
}

// Output is everything the command printed so far.
func (b *Background) Output() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

// WaitFor waits until an output line matches re and returns its submatches;
// it fails the test when the command exits or timeout passes first.
func (b *Background) WaitFor(t testing.TB, re *regexp.Regexp, timeout time.Duration) []string {
	t.Helper()
	deadline := time.After(timeout)
	seen := 0
	for {
		b.mu.Lock()
		for ; seen < len(b.lines); seen++ {
			if m := re.FindStringSubmatch(b.lines[seen]); m != nil {
				b.mu.Unlock()
				return m
			}
		}
		b.mu.Unlock()
		select {
		case <-b.added:
		case <-b.done:
			// Drain lines written just before the exit.
			b.mu.Lock()
			for ; seen < len(b.lines); seen++ {
				if m := re.FindStringSubmatch(b.lines[seen]); m != nil {
					b.mu.Unlock()
					return m
				}
			}
			err := b.err
			b.mu.Unlock()
			t.Fatalf("%v exited (%v) before printing a line matching %q; output:\n%s", b.cmd.Args, err, re, b.Output())
		case <-deadline:
			t.Fatalf("%v printed no line matching %q within %v; output:\n%s", b.cmd.Args, re, timeout, b.Output())
		}
	}
}

// Exited reports whether the command has ended, and its error.
func (b *Background) Exited() (bool, error) {
	select {
	case <-b.done:
		b.mu.Lock()
		defer b.mu.Unlock()
		return true, b.err
	default:
		return false, nil
	}
}
