package remotecommand

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"

	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
	"github.com/crisp-cri/crisp/internal/transport"
)

// peerBackend runs the commands the liveness tests need, in the mock's
// streaming server:
//   - wait: writes "ready\n", then waits for the test's end;
//   - quiet D: writes "begin\n", is silent for D, writes "end\n";
//   - bulk N: writes N bytes ('a' to 'z' over and over).
type peerBackend struct{ done chan struct{} }

func (b peerBackend) Exec(ctx context.Context, _ string, cmd []string, _ io.Reader, out, _ io.WriteCloser, _ bool, _ <-chan remotecommandserver.TerminalSize) error {
	switch cmd[0] {
	case "wait":
		if _, err := io.WriteString(out, "ready\n"); err != nil {
			return err
		}
		select {
		case <-b.done:
		case <-ctx.Done():
		}
	case "quiet":
		d, _ := time.ParseDuration(cmd[1])
		if _, err := io.WriteString(out, "begin\n"); err != nil {
			return err
		}
		select {
		case <-time.After(d):
		case <-b.done:
		}
		_, err := io.WriteString(out, "end\n")
		return err
	case "bulk":
		var n int
		for _, c := range cmd[1] {
			n = n*10 + int(c-'0')
		}
		_, err := io.Copy(out, io.LimitReader(&alphabet{}, int64(n)))
		return err
	}
	return nil
}

func (peerBackend) Attach(context.Context, string, io.Reader, io.WriteCloser, io.WriteCloser, bool, <-chan remotecommandserver.TerminalSize) error {
	return errors.New("no attach here")
}

func (peerBackend) PortForward(context.Context, string, int32, io.ReadWriteCloser) error {
	return errors.New("no port-forward here")
}

// alphabet reads 'a' to 'z' over and over.
type alphabet struct{ n int }

func (a *alphabet) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a' + byte((a.n+i)%26)
	}
	a.n += len(p)
	return len(p), nil
}

// peerServer starts the mock's streaming server (every protocol) with
// peerBackend behind a testkit.Proxy; source makes URLs for cmd that go through
// the proxy.
func peerServer(t *testing.T) (proxy *testkit.Proxy, source func(cmd ...string) transport.URLSource) {
	t.Helper()
	done := make(chan struct{})
	srv, err := streamserver.New(streamserver.Config{Addr: "127.0.0.1:0", Profile: streamserver.ProfileFull}, peerBackend{done: done})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		close(done)
		_ = srv.Close()
	})
	proxy = testkit.NewProxy(t, srv.Addr())
	source = func(cmd ...string) transport.URLSource {
		return func(context.Context) (string, error) {
			resp, err := srv.GetExec(&runtimeapi.ExecRequest{ContainerId: "ctr", Cmd: cmd, Stdout: true})
			if err != nil {
				return "", err
			}
			return strings.Replace(resp.Url, srv.Addr(), proxy.Addr(), 1), nil
		}
	}
	return proxy, source
}
