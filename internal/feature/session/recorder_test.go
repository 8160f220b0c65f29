package session

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
