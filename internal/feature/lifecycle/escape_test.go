package lifecycle

import (
	"bytes"
	"strings"
	"testing"
)

// TestLinesEscape: the lines lifecycle commands print (IDs made or
// removed, notices quoting the runtime: pods, log paths, image refs) reach
// the terminal escaped; the old helpers wrote them raw.
func TestLinesEscape(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := printID(&out, "Removed sandbox %s", "id\x1b]0;PWNED\a"); err != nil {
		t.Fatal(err)
	}
	notice(&errOut, "pulled image %s (%s)", "img\x1b]52;c;cm0K\a", "ref\x1b[2J")
	if got := out.String(); got != "Removed sandbox id\\x1b]0;PWNED\\x07\n" {
		t.Errorf("printID wrote %q", got)
	}
	if got := errOut.String(); got != "crisp: pulled image img\\x1b]52;c;cm0K\\x07 (ref\\x1b[2J)\n" || strings.ContainsAny(got, "\x1b\a") {
		t.Errorf("notice wrote %q", got)
	}
}
