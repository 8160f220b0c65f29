package report

import (
	"bytes"
	"encoding/xml"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/crisp-cri/crisp/internal/base/termsafe"
	"github.com/crisp-cri/crisp/internal/cli/output"
)

// FuzzDecode: whatever the input, Decode neither panics nor hangs, every
// report it returns has a node and a check, the merged fleet's JUnit
// failure count is non-zero exactly when the fleet fails, the text and
// Markdown carry no control character but their newlines, and the JUnit
// is XML that parses.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"testdata/smoke-fail.json", "testdata/kubectl-logs.txt"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"kind":"smoke","node":"n","checks":[{"call":"exec","name":"e","outcome":"pass"}]} {`))
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, probs, err := Decode("fuzz", bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, d := range docs {
			if d.Run.Node == "" || len(d.Run.Cells) == 0 {
				t.Fatalf("a report without node or checks: %+v", d.Run)
			}
		}
		fl := Merge(docs, probs)
		var x bytes.Buffer
		if err := fl.WriteJUnit(&x); err != nil {
			t.Fatal(err)
		}
		if err := xml.Unmarshal(x.Bytes(), new(output.JUnitSuites)); err != nil {
			t.Fatalf("JUnit does not parse: %v", err)
		}
		var text, md bytes.Buffer
		if err := fl.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if err := fl.WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		for _, out := range []string{text.String(), md.String()} {
			if r, ok := controlIn(out); ok {
				t.Fatalf("output carries %U: %q", r, out)
			}
		}
		if (fl.Failures() > 0) != (fl.Check() != nil && len(fl.Runs) > 0) && len(fl.Runs) > 0 {
			t.Fatalf("failures %d but Check() = %v", fl.Failures(), fl.Check())
		}
	})
}

// controlIn finds a character that must not reach a terminal: a control
// character other than newline, a bidirectional control, invalid UTF-8.
func controlIn(s string) (rune, bool) {
	for i, r := range s {
		if r == utf8.RuneError && !strings.HasPrefix(s[i:], "\ufffd") {
			return r, true
		}
		if r != '\n' && termsafe.MustEscape(r) {
			return r, true
		}
	}
	return 0, false
}

// FuzzPrintable: the result is valid UTF-8 on one line with nothing
// mustEscape forbids, it is s itself when s needed no escape, and a
// Markdown cell made of it has no unescaped pipe.
func FuzzPrintable(f *testing.F) {
	for _, s := range []string{"node-a", "\x1b]0;title\x07", "a\r\nb", "\u202eevil", "\xff\xfe", "x|y\\|z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := Printable(s)
		if !utf8.ValidString(p) {
			t.Fatalf("Printable(%q) = %q: not UTF-8", s, p)
		}
		if r, ok := controlIn(p); ok || strings.Contains(p, "\n") {
			t.Fatalf("Printable(%q) = %q carries %U", s, p, r)
		}
		if _, bad := controlIn(s); !bad && !strings.Contains(s, "\n") && p != s {
			t.Fatalf("Printable(%q) = %q: changed text that needed no escape", s, p)
		}
		if pipes("|"+cell(s)+"|") != 2 {
			t.Fatalf("cell(%q) = %q has an unescaped pipe", s, cell(s))
		}
	})
}
