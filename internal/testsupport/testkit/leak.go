package testkit

import (
	"fmt"
	"os"
	"time"

	"go.uber.org/goleak"
)

// LeakGrace is how long the leak checks wait for goroutines that end by
// themselves a moment after a test: spdystream's Connection.Close, for
// one, holds a goroutine up to a second to report a close error.
const LeakGrace = 3 * time.Second

// StreamingServerStuck ignores the one goroutine the mock's streaming server
// library can leave behind for good: a received SPDY stream whose reply never
// went out (the client hung up between its SYN_STREAM and the server's
// SYN_REPLY) blocks Stream.Close in spdystream's waitWriteReply on a
// condition nothing broadcasts again, not even closing the connection. Only
// received streams wait there, and crisp's client receives none, so this
// cannot hide a client leak; it sits in cri-streaming's port-forward handler,
// which crisp does not own.
func StreamingServerStuck() goleak.Option {
	return goleak.IgnoreAnyFunction("github.com/moby/spdystream.(*Stream).waitWriteReply")
}

// FindLeaks returns goleak's report of the goroutines still running after
// grace, or nil once there are none (checked every 100 ms).
func FindLeaks(grace time.Duration, opts ...goleak.Option) error {
	err := goleak.Find(opts...)
	for deadline := time.Now().Add(grace); err != nil && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond) // goleak has no wait of its own beyond its short retries
		err = goleak.Find(opts...)
	}
	return err
}

// Runner is what TestMain runs: *testing.M, or testscript's wrapper of it.
type Runner interface{ Run() int }

// LeakChecked wraps a TestMain's tests: once they pass, goroutines still
// running after grace fail the run. It is goleak.VerifyTestMain with a grace
// period (the exit stays in the test file: only cmd/crisp's main exits):
//
//	func TestMain(m *testing.M) {
//		os.Exit(testkit.LeakChecked{M: m, Grace: testkit.LeakGrace}.Run())
//	}
type LeakChecked struct {
	M     Runner
	Grace time.Duration
	Opts  []goleak.Option
}

// Run runs the tests, then the leak check.
func (l LeakChecked) Run() int {
	if code := l.M.Run(); code != 0 {
		return code
	}
	if err := FindLeaks(l.Grace, l.Opts...); err != nil {
		fmt.Fprintf(os.Stderr, "goleak: goroutines outlived the tests: %v\n", err)
		return 1
	}
	return 0
}
