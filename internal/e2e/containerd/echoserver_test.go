package containerd

import (
	"strconv"
	"testing"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// echoServer is the static in-pod echo server (testdata/echoserver): it
// runs in the busybox image.
var echoServer = testkit.GoBinary{Pkg: "./internal/e2e/containerd/testdata/echoserver", Static: true}

// echoServerPath is where newEchoServer mounts the binary in the container.
const echoServerPath = "/crisp-echoserver"

// echoServerBinary is the echo server, built once per test binary.
func echoServerBinary(t testing.TB) string {
	t.Helper()
	return echoServer.Path(t)
}

// newEchoServer starts a container in the harness's pod that echoes every
// TCP connection on port (a goroutine per connection, no process per
// connection as busybox's nc -e has) and returns its ID.
func (h *Harness) newEchoServer(t testing.TB, port int) string {
	t.Helper()
	return h.newContainer(t, ContainerSpec{
		Name:    "echo",
		Command: []string{echoServerPath, strconv.Itoa(port)},
		Mounts:  []Mount{{HostPath: echoServerBinary(t), ContainerPath: echoServerPath}},
	})
}
