package probe

import (
	"context"
	"errors"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// lostReply is a runtime whose RunPodSandbox makes the pod while the
// caller's time runs out (smoke's --timeout, a SIGINT): the pod exists,
// and its ID reaches only a caller still waiting for it.
type lostReply struct {
	t        *testing.T
	deadline context.CancelFunc // the caller's timeout, striking mid-call
	created  []string
	removed  []string
}

func (l *lostReply) PullImage(context.Context, string, *runtimeapi.PodSandboxConfig) (string, bool, error) {
	return "busybox@sha256:0", false, nil
}

func (l *lostReply) RunPod(ctx context.Context, _ *runtimeapi.PodSandboxConfig, _ string) (string, error) {
	l.deadline()
	l.created = append(l.created, "pod-made-late")
	if err := ctx.Err(); err != nil {
		return "", err // the answer is lost with the caller's context
	}
	return "pod-made-late", nil
}

func (l *lostReply) CreateContainer(context.Context, string, *runtimeapi.ContainerConfig, *runtimeapi.PodSandboxConfig) (string, error) {
	l.t.Error("a container was created after the run's time was up")
	return "ctr", nil
}

func (l *lostReply) StartContainer(context.Context, string) error {
	l.t.Error("a container was started after the run's time was up")
	return nil
}

func (l *lostReply) Cleanup(_ context.Context, podID, _ string) error {
	l.removed = append(l.removed, podID)
	return nil
}

// A run whose time ends while the runtime makes its pod still learns the
// pod's ID and removes it (a 30 ms --timeout once left one behind).
func TestScratchPodMadeAsTimeRanOutIsRemoved(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	rt := &lostReply{t: t, deadline: cancel}
	err := WithScratch(ctx, rt, "busybox", 0, nil, nil, nil, func(context.Context, Scratch) error {
		t.Error("the checks ran after the run's time was up")
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("WithScratch: %v, want the run's own end (context.Canceled)", err)
	}
	if len(rt.created) != 1 || len(rt.removed) != 1 || rt.removed[0] != rt.created[0] {
		t.Errorf("pods created %q, removed %q: want the one created removed", rt.created, rt.removed)
	}
}
