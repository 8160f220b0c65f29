package tracefile

import (
	"strings"
	"testing"
)

// TestPrintEscapes: a trace file is anyone's bytes, and its fields quote
// the runtime and the streaming server. `crisp trace` shows the transport,
// protocol, URL, stream, op, peer and the rest escaped; the old printer
// wrote them raw (a window title, a clipboard write, a cleared screen).
func TestPrintEscapes(t *testing.T) {
	const t0 = `"time":"2026-01-01T00:00:00Z","session":1,"op":"exec\u001b]0;OP\u0007"`
	file := strings.Join([]string{
		`{` + t0 + `,"kind":"handshake","url":"http://h:1/exec/\u001b]52;c;cm0K\u0007","transport":"Web\u001b[2JSocket","offered":["v5\u001b]0;PWNED\u0007"],"protocol":"v5\u001b]0;PWNED\u0007","status":101,"reason":"r\u001b[2J"}`,
		`{` + t0 + `,"kind":"frame","dir":"recv\u001b[31m","stream":"std\u001b]0;S\u0007out","transport":"T\u009b1m","size":3,"data":"G1sySg=="}`,
		`{` + t0 + `,"kind":"open","port":80,"request":1,"peer":"p\u001b]0;P\u0007"}`,
		`{` + t0 + `,"kind":"end","port":80,"request":1,"end":"e\u001b[2J","error":"x\u001b]0;E\u0007"}`,
		`{` + t0 + `,"kind":"close","by":"remote\u001b]0;B\u0007","stream":"s\r"}`,
	}, "\n")
	events, err := Decode(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := Print(&out, events); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if i := strings.IndexAny(got, "\x1b\a\r\u009b"); i >= 0 {
		t.Errorf("crisp trace writes a control character at %d:\n%q", i, got)
	}
	for _, want := range []string{
		`exec\x1b]0;OP\x07`, `Web\x1b[2JSocket`, `offered v5\x1b]0;PWNED\x07 -> v5\x1b]0;PWNED\x07`,
		`http://h:1/exec/\x1b]52;c;cm0K\x07`, `std\x1b]0;S\x07out`, `T\x9b1m`, `p\x1b]0;P\x07`, `e\x1b[2J`, `remote\x1b]0;B\x07`,
		`negotiated Web\x1b[2JSocket v5\x1b]0;PWNED\x07`, `recv\x1b[31m std\x1b]0;S\x07out`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("printed trace lacks %q:\n%s", want, got)
		}
	}
	// The events themselves (what -o json would show) keep their bytes.
	if events[0].Transport != "Web\x1b[2JSocket" {
		t.Errorf("Print changed the events: %q", events[0].Transport)
	}
}
