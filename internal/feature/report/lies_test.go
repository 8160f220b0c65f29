package report

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/crisp-cri/crisp/internal/cli/output"
)

// Each test here is a way crisp report once rated a node better than its
// report said, or showed text from a report that drove the reader's
// terminal.

func decodeString(t *testing.T, in string) *Fleet {
	t.Helper()
	docs, probs, err := Decode("x", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	return Merge(docs, probs)
}

func outputs(t *testing.T, f *Fleet) (text, md, x string) {
	t.Helper()
	var a, b, c bytes.Buffer
	if err := f.WriteText(&a); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteJUnit(&c); err != nil {
		t.Fatal(err)
	}
	return a.String(), b.String(), c.String()
}

func junitFailures(t *testing.T, x string) int {
	t.Helper()
	var parsed output.JUnitSuites
	if err := xml.Unmarshal([]byte(x), &parsed); err != nil {
		t.Fatalf("JUnit does not parse: %v\n%s", err, x)
	}
	return parsed.Failures
}

// A smoke that ran out of time writes its report with "error" set and its
// checks so far all passing: the node failed.
func TestReportErrorFails(t *testing.T) {
	f := decodeString(t, `{"schemaVersion":1,"kind":"smoke","node":"n1","checks":[{"call":"exec","name":"echo","outcome":"pass"}],"passed":1,"failed":0,"error":"smoke did not finish within --timeout 5m0s"}`)
	if f.OK() || !errors.Is(f.Check(), ErrFailed) {
		t.Fatalf("a report carrying an error passed: %v", f.Check())
	}
	text, md, x := outputs(t, f)
	if !strings.Contains(text, "FAIL smoke n1 smoke/finished: smoke did not finish within --timeout 5m0s") {
		t.Errorf("text does not say why:\n%s", text)
	}
	if !strings.Contains(md, "| n1 | FAIL |") {
		t.Errorf("markdown does not fail the node:\n%s", md)
	}
	if junitFailures(t, x) != 1 {
		t.Errorf("JUnit failures != 1:\n%s", x)
	}
}

// smoke -o json on failure: the report on stdout, the tally and an error
// line on stderr, interleaved by the container log at any line.
func TestInterleavedContainerLog(t *testing.T) {
	data, err := os.ReadFile("testdata/smoke-fail.json")
	if err != nil {
		t.Fatal(err)
	}
	stdout := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	stderr := []string{"crisp: smoke: pulling busybox:1.36", "2 passed, 3 failed", "crisp: smoke did not finish within --timeout 5m0s"}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		var log []string
		i, j := 0, 0
		for i < len(stdout) || j < len(stderr) {
			if j < len(stderr) && (i == len(stdout) || rng.IntN(len(stdout)/len(stderr)+1) == 0) {
				log = append(log, stderr[j])
				j++
			} else {
				log = append(log, stdout[i])
				i++
			}
		}
		docs, probs, err := Decode("log", strings.NewReader(strings.Join(log, "\n")+"\n"))
		if err != nil || len(docs) != 1 || len(probs) != 0 {
			t.Fatalf("trial %d: docs %d problems %v err %v; log:\n%s", trial, len(docs), probs, err, strings.Join(log, "\n"))
		}
		if docs[0].Run.Node != "node-b" || !docs[0].Run.Failed() {
			t.Fatalf("trial %d: node %s failed %v", trial, docs[0].Run.Node, docs[0].Run.Failed())
		}
	}
}

// kubectl logs -f -l ... --prefix interleaves the pods' lines: each pod's
// report is collected apart, and a pod that printed no report fails.
func TestPrefixedStreamsApart(t *testing.T) {
	a, _ := os.ReadFile("testdata/smoke-pass.json")
	b, _ := os.ReadFile("testdata/smoke-fail.json")
	la := strings.Split(strings.TrimSpace(string(a)), "\n")
	lb := strings.Split(strings.TrimSpace(string(b)), "\n")
	var log strings.Builder
	for i := 0; i < max(len(la), len(lb)); i++ {
		if i < len(la) {
			fmt.Fprintf(&log, "[pod/crisp-a/smoke] %s\n", la[i])
		}
		if i < len(lb) {
			fmt.Fprintf(&log, "[pod/crisp-b/smoke] %s\n", lb[i])
		}
		if i == 3 {
			log.WriteString("[pod/crisp-c/smoke] crisp: cannot connect to the runtime\n")
			log.WriteString("[pod/crisp-a/target] crisp-smoke-target\n") // kubectl logs --all-containers
		}
	}
	f := decodeString(t, log.String())
	if len(f.Runs) != 2 || f.Runs[0].Node != "node-a" || f.Runs[1].Node != "node-b" {
		t.Fatalf("runs %+v problems %v", f.Runs, f.Problems)
	}
	if len(f.Problems) != 1 || !strings.Contains(f.Problems[0].Err, "no smoke or probe report") || !strings.Contains(f.Problems[0].Source, "pod/crisp-c/smoke") {
		t.Errorf("the pod without a report: problems %v", f.Problems)
	}
	if f.OK() {
		t.Error("a fleet with a pod that printed no report passed")
	}
}

// One input without a report among inputs with one fails the fleet.
func TestFileWithoutReportFails(t *testing.T) {
	empty := t.TempDir() + "/node-c.json"
	if err := os.WriteFile(empty, []byte("crisp: cannot connect\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Load(context.Background(), []string{"testdata/smoke-pass.json", empty}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.OK() || len(f.Problems) != 1 || f.Problems[0].Source != empty {
		t.Errorf("OK %v problems %v: want the empty file as a problem", f.OK(), f.Problems)
	}
}

// Of two reports of a node the later by its own time counts, not the
// later in the stream.
func TestLatestByTime(t *testing.T) {
	newer := `{"schemaVersion":1,"kind":"smoke","node":"n1","time":"2026-12-01T10:05:00Z","checks":[{"call":"exec","name":"e","outcome":"fail"}]}`
	older := `{"schemaVersion":1,"kind":"smoke","node":"n1","time":"2026-12-01T10:00:00Z","checks":[{"call":"exec","name":"e","outcome":"pass"}]}`
	f := decodeString(t, newer+"\n"+older+"\n")
	if len(f.Runs) != 1 || f.OK() || len(f.Notes) != 1 {
		t.Fatalf("runs %+v notes %v: the newer, failing report must count", f.Runs, f.Notes)
	}
	// Reports without a time: kubectl logs --timestamps says when.
	newer = `2026-12-01T10:05:00.5Z {"kind":"smoke","node":"n1","checks":[{"call":"exec","name":"e","outcome":"fail"}]}`
	older = `2026-12-01T10:00:00.5Z {"kind":"smoke","node":"n1","checks":[{"call":"exec","name":"e","outcome":"pass"}]}`
	if f := decodeString(t, newer+"\n"+older+"\n"); f.OK() {
		t.Errorf("by log timestamps: the older, passing report counted")
	}
}

func TestNonsenseRejected(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"schemaVersion":-1,"kind":"smoke","node":"n1","checks":[{"call":"exec","name":"e","outcome":"pass"}]}`, "schemaVersion -1"},
		{`{"schemaVersion":0,"kind":"smoke","node":"n1","checks":[{"call":"exec","name":"e","outcome":"pass"}]}`, "schemaVersion 0"},
		{`{"schemaVersion":"1","kind":"smoke","node":"n1","checks":[]}`, "field schemaVersion is a JSON string where a report has a number"},
		{`{"schemaVersion":1,"kind":"bench","node":"n1","checks":[]}`, `kind "bench"`},
		{`{"schemaVersion":1,"node":"n1","checks":[]}`, `kind ""`},
		{`{"schemaVersion":1,"kind":"smoke","node":"n1","failed":-3,"checks":[{"call":"exec","name":"e","outcome":"pass"}]}`, "failed is -3"},
		{`{"schemaVersion":1,"kind":"smoke","node":"n1","time":"yesterday","checks":[{"call":"exec","name":"e","outcome":"pass"}]}`, `time "yesterday"`},
		{`{"schemaVersion":1,"kind":"smoke","node":"n1","checks":[{"call":"exec","name":"e","outcome":"pass","durationMs":-5}]}`, "negative"},
	} {
		docs, probs, err := Decode("x", strings.NewReader(tc.in))
		if err != nil || len(docs) != 0 || len(probs) != 1 || !strings.Contains(probs[0].Err, tc.want) {
			t.Errorf("%s: docs %d problems %v err %v; want one problem saying %q", tc.in, len(docs), probs, err, tc.want)
		}
	}
}

// A hostile report: escapes that clear the screen, set the window title,
// plant a hyperlink, and CR/LF or pipes that forge rows.
const hostile = "{\"schemaVersion\":1,\"kind\":\"smoke\",\"node\":\"evil\\u001b[2J\\u001b]0;pwned\\u0007\\rnode-z ok\",\"checks\":[" +
	"{\"call\":\"exec\",\"name\":\"e\\u001b]8;;http://x\\u001b\\\\link\",\"outcome\":\"fail\",\"detail\":\"line1\\nFAIL smoke other | forged | row\\u009b31m\\u202e\"}]}"

func TestNoTerminalOrMarkdownInjection(t *testing.T) {
	f := decodeString(t, hostile)
	if len(f.Runs) != 1 {
		t.Fatalf("runs %+v problems %v", f.Runs, f.Problems)
	}
	text, md, x := outputs(t, f)
	for name, out := range map[string]string{"text": text, "markdown": md} {
		for _, r := range out {
			if r != '\n' && (r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x202e) {
				t.Errorf("%s output carries control character %U:\n%q", name, r, out)
				break
			}
		}
	}
	if !strings.Contains(text, `evil\x1b[2J\x1b]0;pwned\x07\rnode-z ok`) {
		t.Errorf("text does not show the node name escaped:\n%s", text)
	}
	if strings.Contains(text, "\nFAIL smoke other") {
		t.Errorf("a detail forged a line of the text:\n%s", text)
	}
	// Every row of a table has as many cells as its header.
	cells := 0
	for _, line := range strings.Split(md, "\n") {
		switch {
		case !strings.HasPrefix(line, "|"):
			cells = 0
		case cells == 0:
			cells = pipes(line)
		case pipes(line) != cells:
			t.Errorf("a markdown row has %d cells, its header %d: %q", pipes(line)-1, cells-1, line)
		}
	}
	if strings.Contains(md, "| forged |") || strings.Contains(md, "\nFAIL smoke other") {
		t.Errorf("markdown forged a cell or line:\n%s", md)
	}
	if junitFailures(t, x) != 1 || !strings.Contains(x, `\x1b[2J`) {
		t.Errorf("JUnit does not keep the failure with the escapes shown:\n%s", x)
	}
}

// pipes counts the cell borders of a Markdown table row: | not escaped.
func pipes(line string) int {
	n := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain node-a":        "plain node-a",
		"ünïcode ✅":           "ünïcode ✅",
		"a\x1b[31mred":        `a\x1b[31mred`,
		"cr\rlf\ntab\t":       `cr\rlf\ntab\t`,
		"bel\x07del\x7f":      `bel\x07del\x7f`,
		"c1\u009b":            `c1\x9b`,
		"bidi\u202eevil":      `bidi\u202eevil`,
		"bad\xffutf8":         `bad\xffutf8`,
		"sep\u2028line":       `sep\u2028line`,
		"osc\x1b]8;;u\x1b\\x": `osc\x1b]8;;u\x1b\x`,
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}
