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
	w, err := Create(path, 2)
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
