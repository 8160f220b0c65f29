package debug

import (
	"path/filepath"
	"testing"

	"github.com/crisp-cri/crisp/internal/feature/session"
)

// testRunner is a Runner for tests of the container way, owned by this
// test process.
func testRunner(t *testing.T, deps session.Deps) Runner {
	t.Helper()
	return Runner{Deps: deps, Leases: Leases{Dir: filepath.Join(t.TempDir(), "debug"), Host: "testnode"}, Host: NewHostEntry()}
}
