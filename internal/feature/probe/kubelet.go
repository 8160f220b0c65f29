package probe

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
)

// PodLister finds the runtime's kubelet pods; *client.Client implements it
// (client.KubeletPods says how crisp tells a kubelet's runtime).
type PodLister interface {
	KubeletPods(ctx context.Context) ([]string, error)
}

// KubeletRuntimeError is smoke --image refused on a runtime a kubelet
// manages: the kubelet would remove the scratch pod under the checks.
type KubeletRuntimeError struct {
	Endpoint string
	// Pods are the kubelet's pods found (namespace/name).
	Pods []string
}

func (e *KubeletRuntimeError) Error() string {
	example := strings.Join(e.Pods[:min(len(e.Pods), 2)], ", ")
	return fmt.Sprintf("smoke --image refused: a kubelet manages the runtime at %s (%d of its pods carry the kubelet's %s label, e.g. %s), "+
		"and a kubelet stops and removes every runtime pod it did not create within seconds, so the scratch pod would die under the checks. "+
		"What works here: smoke a container the kubelet owns (crisp smoke CONTAINER --pod POD --port N; deploy/daemonset.yaml and deploy/job.yaml "+
		"do this with a sidecar in their own pod), or `crisp fleet smoke` from a workstation with a kubeconfig; "+
		"if the kubelet is stopped (a runtime upgrade with the node drained), --kubelet-stopped creates the pod anyway",
		e.Endpoint, len(e.Pods), client.KubeletPodUIDLabel, example)
}

// RefuseOnKubelet returns a *KubeletRuntimeError when a kubelet manages the
// runtime l lists, nil when none does.
func RefuseOnKubelet(ctx context.Context, l PodLister, endpoint string) error {
	pods, err := l.KubeletPods(ctx)
	if err != nil {
		return fmt.Errorf("smoke --image: checking for a kubelet's pods before creating one: %w", err)
	}
	if len(pods) > 0 {
		return &KubeletRuntimeError{Endpoint: endpoint, Pods: pods}
	}
	return nil
}

// TargetGoneError says that the container under test stopped or vanished
// during the run, removed by someone else (on a kubelet's runtime, the
// kubelet's orphan clean-up): the failures after it say nothing about the
// runtime's streaming.
type TargetGoneError struct {
	ContainerID, PodID string
	// What is "removed" or the state seen ("Exited", pod "NotReady").
	What string
	// After is how long after the run began it was noticed.
	After time.Duration
	// Scratch: the pod was smoke --image's own.
	Scratch bool
}

func (e *TargetGoneError) Error() string {
	what := fmt.Sprintf("the container under test (container %s, pod %s)", client.ShortID(e.ContainerID), client.ShortID(e.PodID))
	if e.Scratch {
		what = fmt.Sprintf("the scratch pod smoke --image created (pod %s, container %s)", client.ShortID(e.PodID), client.ShortID(e.ContainerID))
	}
	msg := fmt.Sprintf("%s %s %s into the run, not by smoke: the checks failing after that say nothing about the runtime's streaming protocols",
		what, e.What, e.After.Round(100*time.Millisecond))
	if e.Scratch {
		msg += "; a kubelet removes every runtime pod it did not create (see `crisp smoke --help`: run smoke on a container the kubelet owns)"
	}
	return msg
}

// StatusReader is the part of the CRI runtime service TargetGone asks;
// the raw client, so that a NotFound keeps its gRPC code.
type StatusReader interface {
	ContainerStatus(ctx context.Context, req *runtimeapi.ContainerStatusRequest, opts ...grpc.CallOption) (*runtimeapi.ContainerStatusResponse, error)
	PodSandboxStatus(ctx context.Context, req *runtimeapi.PodSandboxStatusRequest, opts ...grpc.CallOption) (*runtimeapi.PodSandboxStatusResponse, error)
}

// TargetGone returns a function for Smoker.Gone: a *TargetGoneError when
// t's container is no longer running or its pod no longer ready (or either
// is gone), nil otherwise or when the runtime cannot tell.
func TargetGone(sr StatusReader, t Target, scratch bool, started time.Time) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		gone := func(what string) error {
			return &TargetGoneError{ContainerID: t.ContainerID, PodID: t.PodID, What: what, After: time.Since(started), Scratch: scratch}
		}
		ctx, cancel := context.WithTimeout(ctx, client.DefaultRequestTimeout)
		defer cancel()
		cs, err := sr.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: t.ContainerID})
		switch {
		case isNotFound(err):
			return gone("was removed")
		case err != nil:
			return nil // the runtime cannot tell: the check's own failure stands
		case cs.GetStatus().GetState() != runtimeapi.ContainerState_CONTAINER_RUNNING:
			return gone("was stopped (state " + client.ContainerStateName(cs.GetStatus().GetState()) + ")")
		}
		if t.PodID == "" {
			return nil
		}
		if what := podGone(ctx, sr, t.PodID); what != "" {
			return gone(what)
		}
		return nil
	}
}

// ScratchSetupGone returns a function for WithScratch's setupFailed: a
// *TargetGoneError when the scratch pod is gone or no longer ready (a
// kubelet removed it between RunPodSandbox and StartContainer), nil when
// it is still there and the setup's own error stands. A kubelet stops the
// pod's containers first and its sandbox a moment later, so a pod still
// ready is asked again for up to scratchGoneGrace: a start refused because
// the kubelet stopped the container is seen as the pod's loss, not as the
// runtime's start failure. A failed start on a pod nobody touches costs
// that wait once, on the way out.
func ScratchSetupGone(sr StatusReader, started time.Time) func(ctx context.Context, s Scratch) error {
	return func(ctx context.Context, s Scratch) error {
		ctx, cancel := context.WithTimeout(ctx, client.DefaultRequestTimeout)
		defer cancel()
		deadline := time.Now().Add(scratchGoneGrace)
		for {
			if what := podGone(ctx, sr, s.PodID); what != "" {
				return &TargetGoneError{ContainerID: s.ContainerID, PodID: s.PodID, What: what + " before its container ran", After: time.Since(started), Scratch: true}
			}
			if !time.Now().Before(deadline) {
				return nil
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(scratchGoneGrace / 10):
			}
		}
	}
}

// scratchGoneGrace is how long a failed set-up waits to see whether a
// kubelet is taking the scratch pod away (a variable for tests).
var scratchGoneGrace = 3 * time.Second

// podGone says how pod id is lost ("lost its pod", "lost its pod
// (stopped)"), or "" when it is ready or the runtime cannot tell.
func podGone(ctx context.Context, sr StatusReader, id string) string {
	ps, err := sr.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id})
	switch {
	case isNotFound(err):
		return "lost its pod"
	case err == nil && ps.GetStatus().GetState() != runtimeapi.PodSandboxState_SANDBOX_READY:
		return "lost its pod (stopped)"
	}
	return ""
}

func isNotFound(err error) bool { return err != nil && status.Code(err) == codes.NotFound }
