package logs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseLine(t *testing.T) {
	for _, tc := range []struct {
		in, stream, content string
		partial             bool
		bad                 bool
	}{
		{in: "2016-10-06T00:17:09.669794202Z stdout F log content 1\n", stream: "stdout", content: "log content 1\n"},
		{in: "2016-10-06T00:17:09.669794203Z stderr P part", stream: "stderr", content: "part", partial: true},
		{in: "2016-10-06T00:17:09Z stdout F \n", stream: "stdout", content: "\n"},
		{in: "2016-10-06T00:17:09.1+02:00 stdout F:x:y a b  c\n", stream: "stdout", content: "a b  c\n"},
		{in: `{"log":"hi\n","stream":"stderr","time":"2016-10-20T18:39:20.57606443Z"}`, stream: "stderr", content: "hi\n"},
		{in: "not a log line\n", bad: true},
		{in: "2016-10-06T00:17:09Z stdin F x\n", bad: true},
		{in: "2016-10-06T00:17:09Z stdout\n", bad: true},
		{in: "yesterday stdout F x\n", bad: true},
	} {
		msg, err := ParseLine([]byte(tc.in))
		if tc.bad {
			if err == nil {
				t.Errorf("%q: parsed as %+v, want an error", tc.in, msg)
			}
			continue
		}
		if err != nil || msg.Stream != tc.stream || string(msg.Content) != tc.content || msg.Partial != tc.partial {
			t.Errorf("%q: got %+v %v, want %s %q partial=%v", tc.in, msg, err, tc.stream, tc.content, tc.partial)
		}
	}
}

const sample = "2024-01-01T00:00:01.000000000Z stdout F one\n" +
	"2024-01-01T00:00:02.000000000Z stderr F two\n" +
	"2024-01-01T00:00:03.000000000Z stdout P thr\n" +
	"2024-01-01T00:00:03.500000000Z stdout F ee\n" +
	"garbage line\n" +
	"2024-01-01T00:00:04.000000000Z stdout F four\n"

func logFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "0.log")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func notRunning(context.Context) (bool, error) { return false, nil }

func TestRead(t *testing.T) {
	all := Options{Tail: -1, LimitBytes: -1}
	for _, tc := range []struct {
		name           string
		content        string
		opts           Options
		stdout, stderr string
	}{
		{"everything", sample, all, "one\nthree\nfour\n", "two\n"},
		{"tail 2", sample, Options{Tail: 2, LimitBytes: -1}, "four\n", ""},
		{"tail 3 joins the partial line's rest", sample, Options{Tail: 3, LimitBytes: -1}, "ee\nfour\n", ""},
		{"tail 0", sample, Options{Tail: 0, LimitBytes: -1}, "", ""},
		{"tail more than there is", sample, Options{Tail: 100, LimitBytes: -1}, "one\nthree\nfour\n", "two\n"},
		{"tail without a final newline", "2024-01-01T00:00:01Z stdout F a\n2024-01-01T00:00:02Z stdout F b", Options{Tail: 1, LimitBytes: -1}, "b\n", ""},
		{"since", sample, Options{Tail: -1, LimitBytes: -1, Since: time.Date(2024, 1, 1, 0, 0, 2, 0, time.UTC)}, "three\nfour\n", "two\n"},
		{"timestamps only where a line starts", sample, Options{Tail: -1, LimitBytes: -1, Timestamps: true},
			"2024-01-01T00:00:01.000000000Z one\n2024-01-01T00:00:03.000000000Z three\n2024-01-01T00:00:04.000000000Z four\n",
			"2024-01-01T00:00:02.000000000Z two\n"},
		{"stdout only", sample, Options{Tail: -1, LimitBytes: -1, Stream: Stdout}, "one\nthree\nfour\n", ""},
		{"stderr only", sample, Options{Tail: -1, LimitBytes: -1, Stream: Stderr}, "", "two\n"},
		{"limit bytes", sample, Options{Tail: -1, LimitBytes: 6}, "one\n", "tw"},
		{"empty", "", all, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if err := Read(context.Background(), logFile(t, tc.content), tc.opts, notRunning, &out, &errOut); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.stdout || errOut.String() != tc.stderr {
				t.Errorf("stdout %q stderr %q, want %q and %q", out.String(), errOut.String(), tc.stdout, tc.stderr)
			}
		})
	}
}

func TestReadMissingFile(t *testing.T) {
	err := Read(context.Background(), filepath.Join(t.TempDir(), "nope.log"), Options{Tail: -1, LimitBytes: -1}, notRunning, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "nope.log") {
		t.Errorf("got %v", err)
	}
}

// lockedBuffer is written by Read's goroutine and read by the test.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func appendTo(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// Following reads new lines, a line written in two pieces, the rest of a
// rotated file then the new one, and ends once the container stops.
func TestFollowAcrossRotation(t *testing.T) {
	path := logFile(t, "2024-01-01T00:00:01Z stdout F first\n")
	var running atomic.Bool
	running.Store(true)
	var out lockedBuffer
	errc := make(chan error, 1)
	go func() {
		errc <- Read(context.Background(), path, Options{Follow: true, Tail: -1, LimitBytes: -1},
			func(context.Context) (bool, error) { return running.Load(), nil }, &out, &out)
	}()
	eventually(t, "first", func() bool { return out.String() == "first\n" })
	appendTo(t, path, "2024-01-01T00:00:02Z stdout F sec")
	appendTo(t, path, "ond\n")
	eventually(t, "second", func() bool { return out.String() == "first\nsecond\n" })

	// Rotation: a last line lands in the old file as it is moved away.
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	appendTo(t, path+".1", "2024-01-01T00:00:03Z stdout F third\n")
	appendTo(t, path, "2024-01-01T00:00:04Z stdout F fourth\n")
	eventually(t, "fourth", func() bool { return strings.HasSuffix(out.String(), "fourth\n") })
	if got := out.String(); got != "first\nsecond\nthird\nfourth\n" {
		t.Errorf("got %q", got)
	}

	appendTo(t, path, "2024-01-01T00:00:05Z stdout F last words\n")
	running.Store(false)
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Read did not return once the container stopped")
	}
	if !strings.HasSuffix(out.String(), "last words\n") {
		t.Errorf("the lines written before the stop were lost: %q", out.String())
	}
}

func TestFollowCancelled(t *testing.T) {
	path := logFile(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- Read(ctx, path, Options{Follow: true, Tail: -1, LimitBytes: -1},
			func(context.Context) (bool, error) { return true, nil }, &bytes.Buffer{}, &bytes.Buffer{})
	}()
	cancel()
	if err := <-errc; err != context.Canceled { //nolint:errorlint // Read returns ctx.Err() itself
		t.Errorf("got %v, want context.Canceled", err)
	}
}

func TestPreviousPath(t *testing.T) {
	if got, err := PreviousPath("/var/log/pods/ns_p_u/c/2.log", 2, "c"); err != nil || got != "/var/log/pods/ns_p_u/c/1.log" {
		t.Errorf("got %q %v", got, err)
	}
	if _, err := PreviousPath("/x/0.log", 0, "c"); err == nil || !strings.Contains(err.Error(), "previous terminated container c not found") {
		t.Errorf("got %v", err)
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"":                     {},
		"42m":                  now.Add(-42 * time.Minute),
		"2013-01-02T13:23:37Z": time.Date(2013, 1, 2, 13, 23, 37, 0, time.UTC),
		"1136073600.5":         time.Unix(1136073600, 500000000),
		"1136073600":           time.Unix(1136073600, 0),
	} {
		got, err := ParseSince(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("%q: got %v %v, want %v", in, got, err, want)
		}
	}
	if _, err := ParseSince("last tuesday", now); err == nil {
		t.Error("last tuesday parsed")
	}
	// A negative duration would be a time to come: nothing to show, silently.
	if _, err := ParseSince("-5m", now); err == nil || !strings.Contains(err.Error(), "cannot be negative") {
		t.Errorf("-5m: %v; want it refused", err)
	}
}

// FuzzParseLine: no input panics; what parses has a known stream, and a
// full line's content ends in "\n".
func FuzzParseLine(f *testing.F) {
	for _, seed := range []string{
		"2016-10-06T00:17:09.669794202Z stdout F log content 1\n",
		"2016-10-06T00:17:09.669794203Z stderr P part",
		"2016-10-06T00:17:09Z stdout F:x \n",
		`{"log":"hi\n","stream":"stderr","time":"2016-10-20T18:39:20.57606443Z"}`,
		"garbage",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		msg, err := ParseLine(line)
		if err != nil {
			return
		}
		if msg.Stream != Stdout && msg.Stream != Stderr {
			t.Fatalf("%q: stream %q", line, msg.Stream)
		}
		ends := len(msg.Content) > 0 && msg.Content[len(msg.Content)-1] == '\n'
		if !msg.Partial && !ends {
			t.Fatalf("%q: partial=%v but content %q", line, msg.Partial, msg.Content)
		}
	})
}
