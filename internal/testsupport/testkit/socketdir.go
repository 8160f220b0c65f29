package testkit

import (
	"os"
	"testing"
)

// SocketDir is a new folder with a short path for a test's unix sockets
// (a socket's path holds 107 bytes at most, and t.TempDir's can be
// longer), removed at the test's end, after what the test registers later
// (a server on the socket) has stopped.
func SocketDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "crisp-sock-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) }) // best effort: a temporary folder
	return dir
}
