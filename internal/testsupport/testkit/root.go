package testkit

import (
	"os"
	"testing"
)

// RequireRoot skips a test that needs root (why says for what) when the
// test does not run as root, and fails it instead under CI=true, where the
// suite runs as root and a skip would hide that the test never ran.
func RequireRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("needs root (%s), and CI=true", why)
	}
	t.Skipf("needs root (%s)", why)
}
