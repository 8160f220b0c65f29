package session

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
)

// clock ticks a millisecond per reading.
func clock() func() time.Time {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Millisecond); return t }
}

func TestRecorderWritesAsciicastV2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.cast")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := NewRecorder(path, RecordOptions{Command: "sh -c 'echo hi'", Now: clock()})
	if err != nil {
		t.Fatal(err)
	}
	r.Resize(100, 30)
	var term bytes.Buffer
	out := r.Output(&term)
	// "é" split across two writes: recorded whole, never as U+FFFD.
	if _, err := out.Write([]byte("hi \xc3")); err != nil {
		t.Fatal(err)
	}
	if _, err := out.Write([]byte("\xa9\r\n")); err != nil {
		t.Fatal(err)
	}
	r.Resize(120, 40)
	in := r.Input(strings.NewReader("typed"))
	if _, ok := in.(*strings.Reader); !ok {
		t.Errorf("input is recorded without RecordOptions.Input")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if term.String() != "hi é\r\n" {
		t.Errorf("the terminal got %q", term.String())
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 even for a file that existed", fi.Mode().Perm())
	}
	raw, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	var h Header
	if err := json.Unmarshal([]byte(lines[0]), &h); err != nil {
		t.Fatal(err)
	}
	if h.Version != 2 || h.Width != 100 || h.Height != 30 || h.Command != "sh -c 'echo hi'" || h.Timestamp == 0 {
		t.Errorf("header %+v", h)
	}
	want := []string{`[0.001000,"o","hi "]`, `[0.002000,"o","é\r\n"]`, `[0.003000,"r","120x40"]`}
	if strings.Join(lines[1:], "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(lines[1:], "\n"), strings.Join(want, "\n"))
	}
}

func TestRecorderInputAndDefaultSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.cast")
	r, err := NewRecorder(path, RecordOptions{Input: true, Now: clock()})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	if _, err := r.Input(strings.NewReader("pw\n")).Read(buf); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if !strings.Contains(string(raw), `"width":80,"height":24`) || !strings.Contains(string(raw), `"i","pw\n"`) {
		t.Errorf("recording:\n%s", raw)
	}
}

// TestRecorderRefusesFIFO: --record on a FIFO is refused at once, a usage
// error (before: open(2) blocked until a reader came, deaf to signals).
func TestRecorderRefusesFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec.cast")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	// A reader waits, so that the old open would not block but write into
	// the pipe.
	r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	rec, err := NewRecorder(path, RecordOptions{Now: clock()})
	if err == nil {
		_ = rec.Close()
		t.Fatal("recorded into a FIFO")
	}
	if !cmdutil.IsUsage(err) || !strings.Contains(err.Error(), "--record "+path+" is a named pipe") {
		t.Errorf("error %q: want a usage error naming --record and the FIFO", err)
	}
}
