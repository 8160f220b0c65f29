package output

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Write's document parses back to what was written, with the header, an
// unnamed root without a name attribute and empty children left out.
func TestWriteRoundTrips(t *testing.T) {
	doc := JUnitSuites{Tests: 2, Failures: 1, Time: JUnitSeconds(1.5), Suites: []JUnitSuite{{
		Name: "s", Tests: 2, Failures: 1, Time: JUnitSeconds(1.5),
		Props: []JUnitProperty{{Name: "node", Value: "a"}},
		Cases: []JUnitCase{
			{Name: "ok", ClassName: "c", Time: JUnitSeconds(0.5), SystemOut: "pass"},
			{Name: "bad", ClassName: "c", Time: JUnitSeconds(1), Failure: &JUnitMessage{Message: "boom", Type: "failure", Text: "boom\nmore"}},
		},
	}}}
	var b bytes.Buffer
	if err := WriteJUnit(&b, doc); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, xml.Header) || !strings.HasSuffix(out, "</testsuites>\n") {
		t.Errorf("no header or trailing newline:\n%s", out)
	}
	if !strings.Contains(out, `<testsuites tests="2" failures="1" errors="0" skipped="0" time="1.500">`) {
		t.Errorf("root attributes:\n%s", out)
	}
	if strings.Contains(out, "<error") || strings.Contains(out, "<skipped") || strings.Contains(out, "timestamp=") {
		t.Errorf("empty children written:\n%s", out)
	}
	var back JUnitSuites
	if err := xml.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if c := back.Suites[0].Cases[1]; c.Failure == nil || c.Failure.Text != "boom\nmore" {
		t.Errorf("failure did not survive: %+v", c)
	}
}

// WriteJUnitFile's errors name --junit and the file; a file in place is
// replaced by the document.
func TestWriteJUnitFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.xml")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteJUnitFile(path, JUnitSuites{Tests: 1}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), `<testsuites tests="1"`) {
		t.Errorf("file holds %q", b)
	}
	err := WriteJUnitFile(filepath.Join(dir, "no", "such", "dir.xml"), JUnitSuites{})
	if err == nil || !strings.Contains(err.Error(), "--junit") {
		t.Errorf("error %v does not name --junit", err)
	}
}
