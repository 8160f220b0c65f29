package portforward

import (
	"os"
	"testing"

	"github.com/crisp-cri/crisp/internal/transport/spdyconn"
)

// TestOnBothSPDYConnections runs the SPDY and tunnel suites again on the
// connection the package's own run of them is not on: spdystream's, the
// way back (CRISP_SPDY=spdystream), or crisp's own when that is set. Both
// must pass the same tests (running crisp's twice was 44 s of the package). Not on spdystream's: what only crisp's
// connection does (TestPortForwardStalledReaderAlone: spdystream has no
// overrun wait, so one client that stops reading still stops the others).
func TestOnBothSPDYConnections(t *testing.T) {
	suite := []struct {
		name string
		test func(*testing.T)
	}{
		{name: "ServeListener", test: TestPortForwardServeListener},
		{name: "HalfClose", test: TestPortForwardHalfClose},
		{name: "NothingListening", test: TestPortForwardNothingListening},
		{name: "ResetFault", test: TestPortForwardResetFault},
		{name: "StreamServerRestart", test: TestPortForwardStreamServerRestart},
		{name: "Faults", test: TestPortForwardFaults},
		{name: "Concurrent", test: TestPortForwardConcurrent},
	}
	for _, kind := range []string{spdyconn.KindCrisp, spdyconn.KindSpdystream} {
		if kind == spdyconn.KindInEffect() {
			continue // the package's own run of these tests is on it
		}
		t.Run(kind, func(t *testing.T) {
			t.Setenv(spdyconn.EnvKind, kind)
			for _, tc := range suite {
				t.Run(tc.name, tc.test)
			}
		})
	}
}

// skipWithoutSPDY skips a direct WebSocket case while the differential
// table runs the suite on spdystream's connection: no SPDY connection
// carries it, and the crisp run covers it.
func skipWithoutSPDY(t *testing.T, tc pfCase) {
	t.Helper()
	if kind, _ := pfKindOf(tc.offer); kind == pfKindWebSocket && os.Getenv(spdyconn.EnvKind) == spdyconn.KindSpdystream {
		t.Skip("the direct WebSocket protocol runs on no SPDY connection")
	}
}
