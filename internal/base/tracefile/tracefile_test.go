package tracefile

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:1234/exec/AbCdEfGh12345678":              "http://127.0.0.1:1234/exec/REDACTED",
		"https://h:1/portforward/tok?port=80&port=81&other=secret": "https://h:1/portforward/REDACTED?other=REDACTED&port=80&port=81",
		"http://u:pw@h:1/attach/tok/x":                             "http://h:1/attach/REDACTED/REDACTED",
		"not a url":                                                "REDACTED",
		"":                                                         "",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWriterRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	w, err := Create(path, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	s := w.NewSession()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tok := "SecretToken1234"
	w.Record(Event{Time: base, Session: s, Op: "exec", Kind: KindHandshake, URL: "http://h:1/exec/" + tok, Error: "dial http://h:1/exec/" + tok + ": refused"})
	w.Record(Event{Time: base.Add(time.Millisecond), Session: s, Op: "exec", Kind: KindFrame, Dir: DirRecv, Stream: StreamStdout, Data: []byte("hello")})
	code := 3
	w.Record(Event{Time: base.Add(5 * time.Millisecond), Session: s, Op: "exec", Kind: KindFrame, Dir: DirRecv, Stream: StreamError, ExitCode: &code})
	w.Record(Event{Time: base.Add(6 * time.Millisecond), Session: s, Op: "exec", Kind: KindClose, Stream: StreamClose, By: "remote"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(tok)) {
		t.Fatalf("the token leaked:\n%s", raw)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	events, err := Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 4 || string(events[1].Data) != "he" || !events[1].Truncated || events[1].Size != 5 {
		t.Fatalf("decoded %+v", events)
	}
	sum := Summarise(events)
	if len(sum) != 1 || sum[0].Bytes["recv stdout"] != 5 || sum[0].Gap != 4*time.Millisecond || sum[0].FirstClose != "remote close" || *sum[0].ExitCode != 3 {
		t.Errorf("summary %+v", sum)
	}
	var out strings.Builder
	if err := Print(&out, events); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<- stdout`, `5 B "he"...`, "exit status 3", "longest gap    4ms", "closed first   remote close", "1 refused"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printed trace lacks %q:\n%s", want, out.String())
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	for _, in := range []string{
		`{"kind":"frame"}`,
		`{"time":"2026-01-01T00:00:00Z","kind":"other"}`,
		`{"time":"2026-01-01T00:00:00Z","kind":"frame"} {}`,
		`{"time":"2026-01-01T00:00:00Z","kind":"frame","size":-1}`,
		`not json`,
		strings.Repeat("x", MaxLine+10),
	} {
		if _, err := Decode(strings.NewReader("\n" + in + "\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("Decode(%.40q) = %v, want an error naming line 2", in, err)
		}
	}
}

// TestWriterKeepsInputOutUnlessAsked: what crisp sends on stdin (a password
// typed at a terminal) keeps its size only, unless input was asked for.
func TestWriterKeepsInputOutUnlessAsked(t *testing.T) {
	for _, input := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "t.jsonl")
		w, err := Create(path, 64, input)
		if err != nil {
			t.Fatal(err)
		}
		w.Record(Event{Op: "exec", Kind: KindFrame, Dir: DirSend, Stream: StreamStdin, Data: []byte("hunter2\n")})
		w.Record(Event{Op: "exec", Kind: KindFrame, Dir: DirRecv, Stream: StreamStdout, Data: []byte("shown\n")})
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		events, err := Decode(bytes.NewReader(raw))
		if err != nil || len(events) != 2 {
			t.Fatalf("decoded %+v, %v", events, err)
		}
		if kept := string(events[0].Data) == "hunter2\n"; kept != input || (!input && len(events[0].Data) != 0) {
			t.Errorf("input=%v: stdin's payload in the file is %q\n%s", input, events[0].Data, raw)
		}
		if events[0].Size != 8 || string(events[1].Data) != "shown\n" {
			t.Errorf("input=%v: stdin size %d, stdout %q; want 8 and the output kept", input, events[0].Size, events[1].Data)
		}
	}
}

// TestCreatePrivate: an existing file is replaced by a new 0600 one; a
// symbolic link is refused and what it points to is left as it was.
func TestCreatePrivate(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.jsonl")
	if err := os.WriteFile(old, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Create(old, 64, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(old); fi.Mode().Perm() != 0o600 || fi.Size() != 0 {
		t.Errorf("an existing file: mode %v, size %d; want 0600, empty", fi.Mode().Perm(), fi.Size())
	}
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "trace.jsonl")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if _, err := Create(link, 64, false); err == nil || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Errorf("Create through a symlink = %v; want it refused", err)
	}
	if data, _ := os.ReadFile(victim); string(data) != "keep me" {
		t.Errorf("the link's target was changed: %q", data)
	}
}

// TestPrintForwardedConnections: port-forward's open and end events print
// one line each, and the summary counts the connections by how they ended,
// those without an end included.
func TestPrintForwardedConnections(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ev := func(ms int, e Event) Event {
		e.Time, e.Session, e.Op, e.Port = base.Add(time.Duration(ms)*time.Millisecond), 1, "port-forward", 80
		return e
	}
	events := []Event{
		ev(0, Event{Kind: KindOpen, Request: 1, Peer: "127.0.0.1:5000"}),
		ev(1, Event{Kind: KindOpen, Request: 2, Peer: "127.0.0.1:5001"}),
		ev(2, Event{Kind: KindOpen, Request: 3, Peer: "127.0.0.1:5002"}),
		ev(3, Event{Kind: KindOpen, Request: 4, Peer: "127.0.0.1:5003"}),
		ev(4, Event{Kind: KindEnd, Request: 1, End: EndEOF, BytesSent: 5, BytesRecv: 7}),
		ev(5, Event{Kind: KindEnd, Request: 2, End: EndReset, Reason: "idle for 2s", BytesSent: 3}),
		ev(6, Event{Kind: KindEnd, Request: 3, End: EndError, Error: "runtime reported: refused"}),
	}
	var out strings.Builder
	if err := Print(&out, events); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"open      port 80 req 2 from 127.0.0.1:5001",
		"end       port 80 req 1 eof: sent 5 B, received 7 B",
		`end       port 80 req 2 reset: sent 3 B, received 0 B reason "idle for 2s"`,
		`req 3 error: sent 0 B, received 0 B error "runtime reported: refused"`,
		"connections    4 opened; ended: 1 eof, 1 reset, 1 error, 0 closed; 1 without an end",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printed trace lacks %q:\n%s", want, out.String())
		}
	}
	if _, err := Decode(strings.NewReader(`{"time":"2026-01-01T00:00:00Z","kind":"end","bytes_sent":-1}`)); err == nil {
		t.Error("a negative byte count decoded")
	}
}
