package probe

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/transport"
)

// Smoke checks read like probe results in JSON: call, transport and
// protocol side by side, not nested.
func TestSmokeCheckJSONIsFlat(t *testing.T) {
	p := Protocol{Transport: transport.SPDY, Name: transport.ExecProtocolV4}
	data, err := json.Marshal(SmokeCheck{Call: CallExec, Protocol: &p, Check: Check{Name: SmokeEcho, Outcome: Pass}, Duration: Millis(1500 * time.Microsecond)})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"call":"exec","transport":"spdy","protocol":"v4.channel.k8s.io","auto":false,"name":"echo","outcome":"pass","durationMs":1.5}`
	if string(data) != want {
		t.Errorf("got  %s\nwant %s", data, want)
	}
	data, _ = json.Marshal(SmokeCheck{Call: CallExec, Check: Check{Name: SmokeHandshake, Outcome: Fail}})
	if strings.Contains(string(data), "transport") {
		t.Errorf("a check without a protocol names one: %s", data)
	}
}
