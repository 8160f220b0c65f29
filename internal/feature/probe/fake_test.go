package probe

import (
	"context"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/client/clienttest"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
	"github.com/crisp-cri/crisp/internal/testsupport/toyshell"
)

// fakeRuntime is clienttest's fake CRI runtime, asked for URLs through
// crisp's CRI client (CRIURLs), whose streaming server is the mock's,
// driven in-process over toyshell (the one fake streaming backend of
// crisp's tests) and spoken to through crisp's transport
// (TransportStreamer), as probe speaks to a real runtime. The target is
// container c1 in pod p1 (quiet1 beside it prints nothing); echoPort is a
// TCP echo server on loopback, where the mock's pods forward to.
type fakeRuntime struct {
	CRIURLs
	TransportStreamer
	// lostExit makes these protocols report success whatever the exit code:
	// a runtime whose defect smoke must find, as crisp's transport reads it.
	lostExit map[Protocol]bool
	echoPort int32
}

// newFake starts the mock's streaming server with cfg (its profile and
// faults) behind a fake CRI runtime, for the rest of the test.
func newFake(t testing.TB, cfg streamserver.Config) *fakeRuntime {
	t.Helper()
	if cfg.StreamCreationTimeout == 0 {
		cfg.StreamCreationTimeout = 5 * time.Second
	}
	srv, err := streamserver.New(cfg, &toyshell.Shell{})
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
	cri := &clienttest.Fake{Streaming: srv}
	cri.AddPod(&runtimeapi.PodSandbox{Id: "p1", State: runtimeapi.PodSandboxState_SANDBOX_READY})
	cri.AddContainer(&runtimeapi.Container{Id: "c1", PodSandboxId: "p1", State: runtimeapi.ContainerState_CONTAINER_RUNNING})
	// quiet1's main process prints nothing (toyshell's "quiet" containers).
	cri.AddContainer(&runtimeapi.Container{Id: "quiet1", PodSandboxId: "p1", State: runtimeapi.ContainerState_CONTAINER_RUNNING})
	c, err := client.Dial(client.Settings{RuntimeEndpoint: clienttest.Serve(t, cri), RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() }) // the test is over
	return &fakeRuntime{CRIURLs: CRIURLs{Client: c}, echoPort: int32(testkit.Echo(t))}
}

// fakeProfile is the mock's streaming server with one of its profiles.
func fakeProfile(t testing.TB, profile string) *fakeRuntime {
	t.Helper()
	return newFake(t, streamserver.Config{Profile: streamserver.Profile(profile)})
}

// Stream implements Streamer: crisp's transport, with lostExit's defect.
func (f *fakeRuntime) Stream(ctx context.Context, u string, p Protocol, s Session) (Handshake, error) {
	hs, err := f.TransportStreamer.Stream(ctx, u, p, s)
	if _, ok := exitStatus(err); ok && f.lostExit[p] {
		err = nil
	}
	return hs, err
}
