package remotecommand

import (
	"context"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
	"github.com/crisp-cri/crisp/internal/testsupport/toyshell"
	"github.com/crisp-cri/crisp/internal/transport"
)

// peerServer starts the mock's streaming server (every protocol) with
// the toy shell behind a testkit.Proxy; source makes URLs for cmd that go through
// the proxy.
func peerServer(t *testing.T) (proxy *testkit.Proxy, source func(cmd ...string) transport.URLSource) {
	t.Helper()
	srv, err := streamserver.New(streamserver.Config{Addr: "127.0.0.1:0", Profile: streamserver.ProfileFull}, &toyshell.Shell{})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
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
