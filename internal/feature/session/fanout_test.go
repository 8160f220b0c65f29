package session

import (
	"context"
	"errors"
	"io"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
)

// lockedBuffer is a writer the runs share.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestRunPrefixesLinesAndTakesHighestCode(t *testing.T) {
	var out, errOut lockedBuffer
	targets := []Target{{ID: "1", Name: "a"}, {ID: "2", Name: "bbb"}, {ID: "3", Name: "c"}}
	codes := map[string]int{"a": 0, "bbb": 4, "c": 2}
	res := FanOut(context.Background(), targets, FanOutOptions{Out: &out, Err: &errOut}, func(_ context.Context, tg Target, stdout, stderr io.Writer) (int, error) {
		// Two writes for one line, and a last line with no newline: both come
		// out whole, prefixed.
		_, _ = io.WriteString(stdout, "hel")
		_, _ = io.WriteString(stdout, "lo\nsecond")
		_, _ = io.WriteString(stderr, "oops\n")
		return codes[tg.Name], nil
	})
	for _, want := range []string{"a   | hello\n", "a   | second\n", "bbb | hello\n", "c   | second\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errOut.String(), "bbb | oops\n") {
		t.Errorf("stderr: %q", errOut.String())
	}
	if got := res.ExitCode(); got != 4 {
		t.Errorf("exit code %d, want the highest remote code 4", got)
	}
	if got, want := res.Summary(), "ran in 3 container(s): 1 exited 0, 1 exited 2, 1 exited 4; exit status 4"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}

func TestRunFailureIs125(t *testing.T) {
	var out, errOut lockedBuffer
	targets := []Target{{ID: "1", Name: "a"}, {ID: "2", Name: "b"}}
	res := FanOut(context.Background(), targets, FanOutOptions{Out: &out, Err: &errOut}, func(_ context.Context, tg Target, _, _ io.Writer) (int, error) {
		if tg.Name == "b" {
			return 0, errors.New("streaming server\nrefused")
		}
		return 7, nil
	})
	if got := res.ExitCode(); got != cmdutil.ExitCrispFailure {
		t.Errorf("exit code %d, want %d", got, cmdutil.ExitCrispFailure)
	}
	if !strings.Contains(errOut.String(), "b | crisp: streaming server refused\n") {
		t.Errorf("the failure is not one prefixed line: %q", errOut.String())
	}
	if !strings.Contains(res.Summary(), "1 failed (crisp)") {
		t.Errorf("summary %q", res.Summary())
	}
}

func TestRunBoundsParallelism(t *testing.T) {
	targets := make([]Target, 10)
	for i := range targets {
		targets[i] = Target{ID: string(rune('a' + i)), Name: string(rune('a' + i))}
	}
	var inFlight, peak atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{}, len(targets))
	done := make(chan Outcome)
	go func() {
		done <- FanOut(context.Background(), targets, FanOutOptions{Parallel: 3, Out: io.Discard, Err: io.Discard}, func(context.Context, Target, io.Writer, io.Writer) (int, error) {
			n := inFlight.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			started <- struct{}{}
			<-release
			inFlight.Add(-1)
			return 0, nil
		})
	}()
	for range 3 {
		<-started
	}
	close(release)
	res := <-done
	if p := peak.Load(); p != 3 {
		t.Errorf("peak sessions in flight %d, want 3", p)
	}
	if len(res.Results) != 10 || res.ExitCode() != 0 {
		t.Errorf("results %+v", res.Results)
	}
}

func TestPrefixesDisambiguateAndColour(t *testing.T) {
	p := prefixes([]Target{{ID: "aaaaaaaaaaaaaaaa", Name: "web"}, {ID: "bbbbbbbbbbbbbbbb", Name: "web"}, {ID: "c", Name: "db"}}, false)
	// A name used twice gets the short ID that crisp's messages and ps show.
	want := []string{"web aaaaaaaaaaaaa | ", "web bbbbbbbbbbbbb | ", "db                | "}
	for i := range want {
		if p[i] != want[i] {
			t.Errorf("prefix %d = %q, want %q", i, p[i], want[i])
		}
	}
	c := prefixes([]Target{{ID: "1", Name: "a"}}, true)
	if !strings.HasPrefix(c[0], "\x1b[36ma\x1b[0m") {
		t.Errorf("coloured prefix %q", c[0])
	}
}

// TestFanOutEscapesNames: a container chose its name; as the prefix of
// every line it prints (and of crisp's own failure line) it is escaped, so
// `exec --label` cannot be made to set the operator's window title or
// clipboard. With colour, crisp's own colour codes are the only escapes.
func TestFanOutEscapesNames(t *testing.T) {
	targets := []Target{{ID: "1", Name: "\x1b]0;PWNED\a"}, {ID: "2", Name: "\x1b]52;c;cm0K\a"}}
	for _, colour := range []bool{false, true} {
		var out, errOut lockedBuffer
		FanOut(t.Context(), targets, FanOutOptions{Out: &out, Err: &errOut, Color: colour}, func(_ context.Context, tg Target, stdout, _ io.Writer) (int, error) {
			_, _ = io.WriteString(stdout, "hi\n")
			if tg.ID == "2" {
				return 0, errors.New("runtime said \x1b[2J")
			}
			return 0, nil
		})
		all := out.String() + errOut.String()
		for _, want := range []string{`\x1b]0;PWNED\x07`, `\x1b]52;c;cm0K\x07`, `runtime said \x1b[2J`} {
			if !strings.Contains(all, want) {
				t.Errorf("colour=%v: output lacks %q:\n%s", colour, want, all)
			}
		}
		if rest := colourCodes.ReplaceAllString(all, ""); strings.ContainsAny(rest, "\x1b\a") {
			t.Errorf("colour=%v: a control byte reaches the terminal: %q", colour, all)
		}
	}
}

// colourCodes are the prefix colours crisp writes itself.
var colourCodes = regexp.MustCompile(`\x1b\[[0-9]*m`)
