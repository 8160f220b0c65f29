package fleet

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// hostileReport is a node's crisp log whose report fields carry escapes
// that clear the screen, set the window title and plant a hyperlink, and
// CR/LF that would forge lines: what a node (untrusted) can send.
const hostileReport = "crisp: smoke\n{\"schemaVersion\":1,\"kind\":\"smoke\",\"node\":\"node-a\\u001b[2J\\u001b]0;pwned\\u0007\"," +
	"\"checks\":[{\"call\":\"exec\",\"name\":\"e\\u001b]8;;http://x\\u001b\\\\link\",\"outcome\":\"fail\"," +
	"\"detail\":\"line1\\r\\nFAIL smoke forged\\u009b31m\\u202e\"}]}\n"

// The fleet table shows a node's report fields (its node name, check
// names, details) escaped: no control character reaches the terminal and
// no line is forged.
func TestTableEscapesHostileReports(t *testing.T) {
	api := newFake("node-a", "node-b")
	api.script["node-a"], api.logs["node-a"] = finishes(1), hostileReport
	api.script["node-b"], api.logs["node-b"] = finishes(0), smokeJSON("node-b", "pass")
	r, _ := runner(api, time.Minute)
	fl, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteTable(&b, fl, nil); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	t.Logf("table:\n%s", text)
	for _, c := range text {
		if c != '\n' && (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == 0x202e) {
			t.Fatalf("the table carries control character %U:\n%q", c, text)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "FAIL smoke forged") {
			t.Errorf("a detail forged a line: %q", line)
		}
	}
	for _, want := range []string{`node-a\x1b[2J\x1b]0;pwned\x07`, `e\x1b]8;;http://x\x1b\link`, `line1\r\nFAIL smoke forged\x9b31m\u202e`} {
		if !strings.Contains(text, want) {
			t.Errorf("the table does not show %s escaped", want)
		}
	}
}
