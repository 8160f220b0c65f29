package streamserver

import (
	"flag"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
	"k8s.io/klog/v2"
)

func TestMain(m *testing.M) {
	// The streaming libraries report through klog; keep test output to
	// what the tests say.
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)

	code := m.Run()
	if code == 0 && !fuzzing() {
		if err := findLeaks(5 * time.Second); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// fuzzing reports whether this process runs a fuzz target (coordinator or
// worker), whose engine's goroutines are no leaks of ours.
func fuzzing() bool {
	for _, name := range []string{"test.fuzz", "test.fuzzworker"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" && f.Value.String() != "false" {
			return true
		}
	}
	return false
}

// findLeaks is goleak.Find with a longer grace period than
// VerifyTestMain's: spdystream's Connection.Close leaves a shutdown
// goroutine that may wait up to a second after its connection was cut.
func findLeaks(grace time.Duration) error {
	opts := []goleak.Option{
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
		// client-go's WebSocket executor stops its ping loop only on a close
		// frame; after a cut connection (Stop, drop-after) it lingers until
		// its next ping fails, up to 5s later. A client's goroutine, not ours.
		goleak.IgnoreTopFunction("k8s.io/client-go/tools/remotecommand.(*heartbeat).start"),
	}
	deadline := time.Now().Add(grace)
	for {
		err := goleak.Find(opts...)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
