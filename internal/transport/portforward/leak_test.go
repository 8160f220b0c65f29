package portforward

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// TestMain fails the package's tests when goroutines outlive them, after
// a grace for those that end by themselves a moment later (spdystream
// hands a failed close's error to its owner for up to a second).
//
// One server-side goroutine is ignored: cri-streaming's SPDY port-forward
// handler watches each stream pair from its first stream until the second
// arrives or the stream creation timeout (30s) passes (monitorStreamPair).
// A connection cut between the two (the fault, drain and stall tests do
// that) leaves it waiting out the 30s, after the test that caused it may
// have ended. It holds no connection and ends by itself; waiting for it
// would need a 30s grace, and a short creation timeout makes loaded SPDY
// clients fail to open streams (and runs a racy timeout path inside
// cri-streaming).
func TestMain(m *testing.M) {
	os.Exit(testkit.LeakChecked{M: m, Grace: testkit.LeakGrace, Opts: []goleak.Option{
		goleak.IgnoreTopFunction("k8s.io/cri-streaming/pkg/streaming/portforward.(*httpStreamHandler).monitorStreamPair"),
		testkit.StreamingServerStuck(),
	}}.Run())
}
