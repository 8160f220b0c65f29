package report

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// CRI-O's conmon logs a long stdout line in pieces, cut where its read
// buffer ends, and may log a stderr line between the pieces: kubectl logs
// then shows crisp's stderr verdict inside a line of the report (the
// fleet-scale recordings on CRI-O: 2 of 3 failing smoke reports). Every
// cut point of every line of a real report reads back as the report.
func TestStderrLineInsideACutStdoutLine(t *testing.T) {
	report, err := os.ReadFile("testdata/smoke-fail.json")
	if err != nil {
		t.Fatal(err)
	}
	want, probs, err := Decode("whole", bytes.NewReader(report))
	if err != nil || len(probs) != 0 || len(want) != 1 {
		t.Fatalf("the report itself: %v %+v", err, probs)
	}
	// An error line, and smoke's verdict (what the recordings had), taken
	// by turns.
	stderrLines := []string{"crisp: smoke: 2 checks failed: the first: port-forward/spdy ...\n", "50 passed, 1 failed, 13 skipped\n"}
	tried := 0
	for cut := 1; cut < len(report)-1; cut++ {
		if report[cut-1] == '\n' || report[cut] == '\n' {
			continue // a cut between lines: a whole stderr line between two
		}
		lineStart := bytes.LastIndexByte(report[:cut], '\n') + 1
		if cut-lineStart < 2 || (report[lineStart] != ' ' && report[lineStart] != '}') {
			continue // cuts at a line's first bytes, or in the first line: not what conmon's 8 KiB reads make of an indented report
		}
		lineEnd := cut + bytes.IndexByte(report[cut:], '\n')
		if at := cut - lineStart; at > 4 && cut != lineEnd-1 && at != (lineEnd-lineStart)/2 {
			continue // a line's first bytes, its middle and its last byte: every decoding state, without reading the report 20 000 times
		}
		if lineEnd-lineStart > 8 && bytes.Count(report[:lineStart], []byte("\n"))%10 != 0 {
			continue // every short line (the braces that end objects) and every tenth long one: under -race a read costs 20 ms
		}
		tried++
		log := string(report[:cut]) + stderrLines[tried%2] + string(report[cut:])
		docs, probs, err := Decode("garbled", strings.NewReader(log))
		if err != nil || len(probs) != 0 || len(docs) != 1 {
			t.Fatalf("cut at byte %d (%q|%q): %d docs, problems %+v, %v", cut, report[lineStart:cut], report[cut:min(cut+10, len(report))], len(docs), probs, err)
		}
		if got, w := docs[0].Run, want[0].Run; got.Node != w.Node || len(got.Cells) != len(w.Cells) || got.Count(Fail) != w.Count(Fail) {
			t.Fatalf("cut at byte %d: node %s, %d cells (%d failed), want %s, %d (%d)", cut, got.Node, len(got.Cells), got.Count(Fail), w.Node, len(w.Cells), w.Count(Fail))
		}
	}
	if tried < 100 {
		t.Fatalf("only %d cuts tried", tried)
	}
}
