package testkit

import (
	"testing"
	"time"
)

// PollInterval is how often Poll and Eventually check their condition.
const PollInterval = 10 * time.Millisecond

// Poll checks cond every PollInterval until it returns true or timeout has
// passed, and returns whether it did. Use it where there is no testing.TB
// (a testscript command); in a test, use Eventually.
func Poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	ticker := time.NewTicker(PollInterval)
	defer ticker.Stop()
	for {
		if cond() {
			return true
		}
		if !time.Now().Before(deadline) {
			return false
		}
		<-ticker.C
	}
}

// Eventually checks cond until it returns true and fails the test with the
// message when it has not within timeout.
func Eventually(t testing.TB, timeout time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	if !Poll(timeout, cond) {
		t.Fatalf("after %s: "+format, append([]any{timeout}, args...)...)
	}
}
