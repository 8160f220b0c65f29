package debug

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if pgid := os.Getenv(watchHelperEnv); pgid != "" {
		os.Exit(watchHelper(pgid)) // the test binary as the session's watcher
	}
	if target := os.Getenv(hostHelperEnv); target != "" {
		os.Exit(hostWayHelper(target)) // the test binary as a crisp the test can kill
	}
	goleak.VerifyTestMain(m)
}
