package probe

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// podStates answers PodSandboxStatus with the states in turn, the last
// one for good.
type podStates struct {
	states []runtimeapi.PodSandboxState
	calls  atomic.Int32
}

func (p *podStates) ContainerStatus(context.Context, *runtimeapi.ContainerStatusRequest, ...grpc.CallOption) (*runtimeapi.ContainerStatusResponse, error) {
	return nil, errors.New("not asked")
}

func (p *podStates) PodSandboxStatus(context.Context, *runtimeapi.PodSandboxStatusRequest, ...grpc.CallOption) (*runtimeapi.PodSandboxStatusResponse, error) {
	i := int(p.calls.Add(1)) - 1
	st := p.states[min(i, len(p.states)-1)]
	return &runtimeapi.PodSandboxStatusResponse{Status: &runtimeapi.PodSandboxStatus{State: st}}, nil
}

// The kubelet stops the scratch pod's container, then its sandbox: the
// start fails while the pod still reads ready (a kubelet suite failure of
// this session). The set-up's explanation waits to see the pod go.
func TestScratchSetupGoneSeesAKubeletStoppingThePod(t *testing.T) {
	old := scratchGoneGrace
	scratchGoneGrace = 2 * time.Second
	t.Cleanup(func() { scratchGoneGrace = old })

	stopping := &podStates{states: []runtimeapi.PodSandboxState{
		runtimeapi.PodSandboxState_SANDBOX_READY, runtimeapi.PodSandboxState_SANDBOX_READY,
		runtimeapi.PodSandboxState_SANDBOX_NOTREADY,
	}}
	err := ScratchSetupGone(stopping, time.Now())(t.Context(), Scratch{PodID: "p", ContainerID: "c"})
	if _, ok := errors.AsType[*TargetGoneError](err); !ok {
		t.Fatalf("pod stopped just after the failed start: %v; want a *TargetGoneError", err)
	}

	untouched := &podStates{states: []runtimeapi.PodSandboxState{runtimeapi.PodSandboxState_SANDBOX_READY}}
	if err := ScratchSetupGone(untouched, time.Now())(t.Context(), Scratch{PodID: "p", ContainerID: "c"}); err != nil {
		t.Fatalf("a pod that stays ready: %v; want nil (the start's own error stands)", err)
	}
	if untouched.calls.Load() < 2 {
		t.Errorf("a ready pod was asked %d time(s); want it asked again within the grace", untouched.calls.Load())
	}
}
