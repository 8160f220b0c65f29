package demo

import (
	"os"
	"testing"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
	"go.uber.org/goleak"
)

// The demo starts a mock runtime, an echo server and streams: all must be
// gone once it returns.
func TestMain(m *testing.M) {
	os.Exit(testkit.LeakChecked{M: m, Grace: testkit.LeakGrace, Opts: []goleak.Option{testkit.StreamingServerStuck()}}.Run())
}
