package containerd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// echoServerBuild is the static in-pod echo server (testdata/echoserver),
// built once per test binary.
var echoServerBuild struct {
	once sync.Once
	bin  string
	err  error
}

// echoServerPath is where newEchoServer mounts the binary in the container.
const echoServerPath = "/crisp-echoserver"

// echoServerBinary builds testdata/echoserver statically into the suite's
// temporary folder, so that it runs in the busybox image.
func echoServerBinary(t testing.TB) string {
	t.Helper()
	b := &echoServerBuild
	b.once.Do(func() {
		b.bin = filepath.Join(suite.binDir, "echoserver")
		cmd := exec.Command("go", "build", "-trimpath", "-o", b.bin, "./internal/e2e/containerd/testdata/echoserver")
		cmd.Dir, cmd.Env = suite.repo, append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build testdata/echoserver: %w\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
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
