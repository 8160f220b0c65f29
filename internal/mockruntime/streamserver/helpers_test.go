package streamserver

import (
	"net/url"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
	"github.com/crisp-cri/crisp/internal/testsupport/toyshell"
)

// echoListener is a TCP echo server on loopback; it stops with the test.
func echoListener(t testing.TB) int32 { return int32(testkit.Echo(t)) }

// startServer starts a server for the test over toyshell's backend (the
// one fake streaming backend of crisp's tests) and closes it at cleanup.
func startServer(t testing.TB, cfg Config) (*server, *toyshell.Shell) {
	t.Helper()
	b := &toyshell.Shell{Sleepers: make(chan struct{}, 100)}
	if cfg.StreamCreationTimeout == 0 {
		cfg.StreamCreationTimeout = 5 * time.Second
	}
	srv, err := New(cfg, b)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	return srv.(*server), b
}

// responseURL is the parsed URL of a streaming server's answer, which must
// have come (err nil).
func responseURL(t testing.TB, resp interface{ GetUrl() string }, err error) *url.URL {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(resp.GetUrl())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func execURL(t testing.TB, s Server, req *runtimeapi.ExecRequest) *url.URL {
	t.Helper()
	if req.ContainerId == "" {
		req.ContainerId = "c1"
	}
	resp, err := s.GetExec(req)
	return responseURL(t, resp, err)
}

func attachURL(t testing.TB, s Server, req *runtimeapi.AttachRequest) *url.URL {
	t.Helper()
	if req.ContainerId == "" {
		req.ContainerId = "c1"
	}
	resp, err := s.GetAttach(req)
	return responseURL(t, resp, err)
}

func portForwardURL(t testing.TB, s Server, req *runtimeapi.PortForwardRequest) *url.URL {
	t.Helper()
	if req.PodSandboxId == "" {
		req.PodSandboxId = "p1"
	}
	resp, err := s.GetPortForward(req)
	return responseURL(t, resp, err)
}

// has reports whether tok is outstanding.
func (c *tokenCache) has(tok string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.entries[tok]
	return ok
}
