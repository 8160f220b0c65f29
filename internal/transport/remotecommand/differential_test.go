package remotecommand

import (
	"testing"

	"github.com/crisp-cri/crisp/internal/transport/spdyconn"
)

// TestOnBothSPDYConnections runs the SPDY sessions of this suite again on
// the connection the package's own run of them is not on: spdystream's, the
// way back (CRISP_SPDY=spdystream), or crisp's own when that is set. Both
// must pass the same tests. Not here: what only crisp's connection
// bounds (spdyconn's own tests: header blocks, overrun).
func TestOnBothSPDYConnections(t *testing.T) {
	suite := []struct {
		name      string
		test      func(*testing.T)
		crispOnly bool // see its line
	}{
		{name: "FallsBackWithFreshURLs", test: TestStreamFallsBackWithFreshURLs},
		{name: "ExitCodes", test: TestExitCodes},
		{name: "StdinAndStderr", test: TestStdinAndStderr},
		{name: "SPDYV1ErrorTextAfterOutput", test: TestSPDYV1ErrorTextAfterOutput},
		{name: "PipedStdinOnSPDYV1FailsFast", test: TestPipedStdinOnSPDYV1FailsFast},
		{name: "LocalWriteErrorIsAnError", test: TestLocalWriteErrorIsAnError},
		{name: "ExecOverTLS", test: TestExecOverTLS},
		// spdystream's own wait for the reply (30s) goes on behind the
		// bound, a goroutine past the leak check: the bound itself holds.
		{name: "HostileNeverAccepts", test: TestHostileNeverAccepts, crispOnly: true},
		{name: "HostileNoStatus", test: TestHostileNoStatus},
		{name: "HostileErrorFlood", test: TestHostileErrorFlood},
		{name: "MockWithholdStatus", test: TestMockWithholdStatus},
	}
	for _, kind := range []string{spdyconn.KindCrisp, spdyconn.KindSpdystream} {
		if kind == spdyconn.KindInEffect() {
			continue // the package's own run of these tests is on it
		}
		t.Run(kind, func(t *testing.T) {
			t.Setenv(spdyconn.EnvKind, kind)
			for _, tc := range suite {
				if tc.crispOnly && kind != spdyconn.KindCrisp {
					continue
				}
				t.Run(tc.name, tc.test)
			}
		})
	}
}
