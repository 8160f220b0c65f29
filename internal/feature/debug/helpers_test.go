package debug

import (
	"os"
	"testing"

	"github.com/crisp-cri/crisp/internal/feature/session"
)

// testRunner is a Runner for tests of the container way, owned by this
// test process.
func testRunner(t *testing.T, deps session.Deps) Runner {
	t.Helper()
	return Runner{Deps: deps, Owner: OwnerOf(os.Getpid()), Alive: OwnerAlive, Host: NewHostEntry()}
}
