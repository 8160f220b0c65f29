package probe

import (
	"strings"
	"testing"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
	"github.com/crisp-cri/crisp/internal/transport"
)

// The TTY check's verdicts name no runtime (probe runs on all of them) and
// say what the runtime must change: a lost last line (the stream closed
// before the output was copied) and a first size that arrived late (the
// process started before the size was set), as CRI-O's TTY exec shows now
// and then.
func TestTTYVerdictsSayWhatTheRuntimeMustChange(t *testing.T) {
	for _, tt := range []struct {
		name, output, want string
	}{
		{"nothing", "", "must finish copying the TTY's output before it reports the exit"},
		{"last line lost", "37 101\r\n", "its last line never arrived"},
		{"first size late", "24 80\r\n40 120\r\n", "must set the terminal's size before it starts the process"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTTYCheck()
			_, _ = tc.out.Write([]byte(tt.output)) // a bytes.Buffer underneath: no error
			for _, tr := range []transport.Transport{transport.WebSocket, transport.SPDY} {
				outcome, detail := tc.verdict(Protocol{Transport: tr}, nil)
				if outcome != Fail || !strings.Contains(detail, tt.want) {
					t.Errorf("over %s: %v %q; want a failure saying %q", tr, outcome, detail, tt.want)
				}
				if !testkit.IsRuntimeTTYRace(detail) {
					t.Errorf("over %s: tests that tolerate a runtime's TTY race do not recognise %q", tr, detail)
				}
				if strings.Contains(detail, "containerd") || strings.Contains(detail, "CRI-O") {
					t.Errorf("over %s: %q names a runtime; probe runs on every one", tr, detail)
				}
			}
		})
	}
}
