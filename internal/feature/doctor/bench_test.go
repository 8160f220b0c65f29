package doctor

import (
	"context"
	"testing"

	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// BenchmarkHealthyWalk is the cost of one healthy node doctor run on the
// mock (every hop, the port-forward round trip included), as containerd
// and CRI-O serve (cri-streaming: v5 refused, a fallback) and with
// everything accepted (full). The budget is 2 s a run on a calm machine;
// the attach hop's read window is most of it.
func BenchmarkHealthyWalk(b *testing.B) {
	for _, p := range []streamserver.Profile{streamserver.ProfileCRIStreaming, streamserver.ProfileFull} {
		b.Run(string(p), func(b *testing.B) {
			fx := newFixture(b, mockruntime.Config{Profile: p}, mocktest.ContainerSpec{})
			fx.w.port = int32(testkit.Echo(b))
			for b.Loop() {
				for _, h := range fx.w.walk(context.Background()) {
					if h.Failed() {
						b.Fatalf("hop %s failed: %s", h.Name, h.Error)
					}
				}
			}
		})
	}
}
