package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
)

// castEvent is one asciicast v2 event line.
type castEvent struct {
	Time float64
	Kind string
	Data string
}

// readCast parses an asciicast v2 file strictly: a header, then events.
func readCast(t *testing.T, path string) (map[string]any, []castEvent) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	var header map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &header); err != nil {
		t.Fatalf("header %q: %v", lines[0], err)
	}
	var events []castEvent
	last := 0.0
	for _, line := range lines[1:] {
		var ev []any
		if err := json.Unmarshal([]byte(line), &ev); err != nil || len(ev) != 3 {
			t.Fatalf("event %q is not [time, kind, data]: %v", line, err)
		}
		tm, ok1 := ev[0].(float64)
		kind, ok2 := ev[1].(string)
		data, ok3 := ev[2].(string)
		if !ok1 || !ok2 || !ok3 || tm < last {
			t.Fatalf("event %q: want [non-decreasing seconds, kind, text]", line)
		}
		last = tm
		events = append(events, castEvent{tm, kind, data})
	}
	return header, events
}

// privateConfig points crisp at an empty config file of the test's own
// (a regular file: crisp refuses to read a device such as /dev/null).
func privateConfig(t *testing.T, s *ptySession) {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "crictl.yaml")
	if err := os.WriteFile(cfg, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.cmd.Env = append(s.cmd.Env, "CRI_CONFIG_FILE="+cfg) // the last one wins
}

func TestExecRecordAsciicast(t *testing.T) {
	env, ctr := ptyContainer(t, streamserver.ProfileFull)
	cast := filepath.Join(t.TempDir(), "session.cast")
	s := startPTY(t, 30, 100, "-r", env.Endpoint, "exec", "-it", "--record", cast, ctr, "--", "sh", "-c", "echo hi; read x; echo bye")
	privateConfig(t, s)
	s.run()
	m := s.waitOutput(0, `hi\r?\n`)

	// A resize during the session lands in the recording as an "r" event.
	if err := pty.Setsize(s.ptmx, &pty.Winsize{Rows: 40, Cols: 120}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(ptyWait)
	for {
		raw, err := os.ReadFile(cast)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), `"r","120x40"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no resize event in the recording:\n%s", raw)
		}
		time.Sleep(20 * time.Millisecond) // polling a file for a condition, not a timing guess
	}
	s.typeText("x\n")
	s.waitOutput(m, `bye`)
	if code := s.wait(); code != 0 {
		t.Fatalf("crisp exited %d", code)
	}

	fi, err := os.Stat(cast)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("recording mode %v, want 0600", fi.Mode().Perm())
	}
	header, events := readCast(t, cast)
	if header["version"] != 2.0 || header["width"] != 100.0 || header["height"] != 30.0 {
		t.Errorf("header %v: want version 2, width 100, height 30", header)
	}
	if _, ok := header["timestamp"].(float64); !ok {
		t.Errorf("header %v has no timestamp", header)
	}
	if cmd, _ := header["command"].(string); !strings.Contains(cmd, "echo hi") {
		t.Errorf("header command %q", cmd)
	}
	var out strings.Builder
	for _, ev := range events {
		switch ev.Kind {
		case "o":
			out.WriteString(ev.Data)
		case "r":
		default:
			t.Errorf("event kind %q without --record-input", ev.Kind)
		}
	}
	if !strings.Contains(out.String(), "hi") || !strings.Contains(out.String(), "bye") {
		t.Errorf("output events hold %q, want hi and bye", out.String())
	}
}

func TestRecordInputAndFlags(t *testing.T) {
	env, ctr := ptyContainer(t, streamserver.ProfileFull)
	cast := filepath.Join(t.TempDir(), "in.cast")
	s := startPTY(t, 24, 80, "-r", env.Endpoint, "exec", "-it", "--record", cast, "--record-input", ctr, "--", "sh", "-c", "read x; echo got-$x")
	privateConfig(t, s)
	s.run()
	s.typeText("secret\n")
	s.waitOutput(0, `got-secret`)
	if code := s.wait(); code != 0 {
		t.Fatalf("crisp exited %d", code)
	}
	_, events := readCast(t, cast)
	var in strings.Builder
	for _, ev := range events {
		if ev.Kind == "i" {
			in.WriteString(ev.Data)
		}
	}
	if !strings.Contains(in.String(), "secret") {
		t.Errorf("input events %q, want the typed text", in.String())
	}
}
