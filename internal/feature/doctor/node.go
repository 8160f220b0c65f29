package doctor

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/transport"
)

// The node hops, in the order the path is walked.
const (
	HopRuntime     = "runtime"
	HopReady       = "runtime-ready"
	HopTarget      = "target"
	HopExecRPC     = "exec-rpc"
	HopTCP         = "tcp"
	HopTLS         = "tls"
	HopExec        = "exec"
	HopAttach      = "attach"
	HopPortForward = "port-forward"
)

// walker walks the node path once per run; what it learns of the runtime
// (its flavour) stays for the explanations of later runs.
type walker struct {
	c   *client.Client
	cfg transport.Config
	// tlsCfg is --tls-*'s configuration (nil: system roots, verified).
	tlsCfg *tls.Config
	ref    string
	pod    string // narrows ref to this pod's containers ("": any pod's)
	port   int32
	cmd    []string
	// hopTimeout bounds each hop.
	hopTimeout time.Duration
	// attachWindow is how long attach reads once upgraded.
	attachWindow time.Duration

	rt     Runtime
	target Target
}

// run is one walk of the path: the hops so far, and whether it must stop.
type run struct {
	hops []Hop
}

// add appends h and reports whether the walk goes on (h did not fail).
func (r *run) add(h Hop) bool {
	r.hops = append(r.hops, h)
	return !h.Failed()
}

// timed runs f as hop name, timing it.
func timed(name string, f func(h *Hop)) Hop {
	h := Hop{Name: name, Outcome: Pass}
	start := time.Now()
	f(&h)
	h.Latency = millis(time.Since(start))
	return h
}

// fail fills h as failed with err, its signature, and the explanation.
func (h *Hop) fail(tried string, err error, explain func(sig string) (string, string)) {
	h.Outcome = Fail
	h.Tried = redactTokens(tried)
	if err != nil {
		h.Error = redactTokens(transport.Shorten(err.Error()))
		h.Signature = signature(err)
	}
	if explain != nil {
		h.Cause, h.Fix = explain(h.Signature)
	}
}

// bound is ctx bounded by the hop timeout.
func (w *walker) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, w.hopTimeout)
}

// walk runs the path once and returns its hops, up to the first failure.
func (w *walker) walk(ctx context.Context) []Hop {
	r := &run{}
	if !r.add(w.runtimeHop(ctx)) || !r.add(w.readyHop(ctx)) {
		return r.hops
	}
	if w.ref == "" {
		r.add(Hop{Name: HopTarget, Outcome: Skip, Detail: "no CONTAINER or POD given: the streaming hops need one (crisp doctor CONTAINER)"})
		return r.hops
	}
	ctr, h := w.targetHop(ctx)
	if !r.add(h) || ctr == "" {
		return r.hops
	}
	w.streamingHops(ctx, r, ctr)
	return r.hops
}

// runtimeHop is CRI Version: the socket answers, and who answers.
func (w *walker) runtimeHop(ctx context.Context) Hop {
	return timed(HopRuntime, func(h *Hop) {
		ctx, cancel := w.bound(ctx)
		defer cancel()
		var v *runtimeapi.VersionResponse
		err := w.c.Call(ctx, "Version", func(ctx context.Context) (err error) {
			v, err = w.c.Runtime.Version(ctx, &runtimeapi.VersionRequest{})
			return err
		})
		if err != nil {
			h.fail("CRI Version call at "+w.c.Endpoint, err, func(sig string) (string, string) {
				if strings.Contains(err.Error(), "not a socket") {
					sig = sigRefused
				}
				return explainSocket(sig, w.c.Endpoint)
			})
			return
		}
		w.rt = Runtime{Endpoint: w.c.Endpoint, Name: v.GetRuntimeName(), Version: v.GetRuntimeVersion(), API: v.GetRuntimeApiVersion()}
		w.rt.Flavour = FlavourOf(w.rt.Name, w.rt.Version)
		h.Detail = fmt.Sprintf("%s %s (CRI %s) at %s", w.rt.Name, w.rt.Version, w.rt.API, w.c.Endpoint)
	})
}

// readyHop is CRI Status: RuntimeReady must hold; NetworkReady false is a
// warning (exec and attach need no pod network, port-forward may).
func (w *walker) readyHop(ctx context.Context) Hop {
	return timed(HopReady, func(h *Hop) {
		ctx, cancel := w.bound(ctx)
		defer cancel()
		var st *runtimeapi.StatusResponse
		err := w.c.Call(ctx, "Status", func(ctx context.Context) (err error) {
			st, err = w.c.Runtime.Status(ctx, &runtimeapi.StatusRequest{})
			return err
		})
		if err != nil {
			h.fail("CRI Status call at "+w.c.Endpoint, err, func(sig string) (string, string) { return explainSocket(sig, w.c.Endpoint) })
			return
		}
		judgeConditions(h, w.rt.Flavour, w.c.Endpoint, st.GetStatus().GetConditions())
	})
}

// judgeConditions reads CRI Status's conditions into h: RuntimeReady
// false fails, NetworkReady false warns; the runtime's own conditions
// (containerd 2.x's ContainerdHasNoDeprecationWarnings) say nothing of
// streaming and are a note.
func judgeConditions(h *Hop, f Flavour, endpoint string, conds []*runtimeapi.RuntimeCondition) {
	var seen []string
	for _, c := range conds {
		seen = append(seen, fmt.Sprintf("%s=%t", c.GetType(), c.GetStatus()))
		if c.GetStatus() {
			continue
		}
		cause, fix := explainNotReady(f, c.GetType(), c.GetReason(), c.GetMessage())
		switch c.GetType() {
		case runtimeapi.RuntimeReady:
			h.Outcome, h.Tried, h.Signature, h.Cause, h.Fix = Fail, "CRI Status at "+endpoint, sigNotReady, cause, fix
			h.Error = fmt.Sprintf("%s is false: %s %s", c.GetType(), c.GetReason(), c.GetMessage())
			h.Detail = strings.Join(seen, ", ")
			return
		case runtimeapi.NetworkReady:
			h.Outcome, h.Cause, h.Fix = Warn, cause, fix
		default:
			if h.Outcome == Pass {
				h.Outcome, h.Cause = Note, cause
				h.Fix = "nothing to fix for streaming: a condition of the runtime's own, not one of the CRI's (RuntimeReady, NetworkReady)"
			}
		}
	}
	h.Detail = strings.Join(seen, ", ")
}

// targetHop resolves the CONTAINER or POD and checks that it runs; it
// returns the container's ID ("" when the hop failed).
func (w *walker) targetHop(ctx context.Context) (string, Hop) {
	id := ""
	h := timed(HopTarget, func(h *Hop) {
		ctx, cancel := w.bound(ctx)
		defer cancel()
		ctr, podID, err := w.resolve(ctx)
		if err != nil {
			h.fail(w.resolving(), err, func(string) (string, string) {
				return explainTarget(sigNotFound, fmt.Sprintf("%q names no single container or pod on this runtime", w.ref))
			})
			h.Signature = sigNotFound
			return
		}
		w.target.Container, w.target.Pod = ctr.GetId(), podID
		state := ctr.GetState()
		if cs, err := w.c.ContainerStatus(ctx, ctr.GetId(), false); err == nil {
			state = cs.GetStatus().GetState()
			if state != runtimeapi.ContainerState_CONTAINER_RUNNING {
				what := fmt.Sprintf("container %s is %s (exit code %d, reason %q)", client.ShortID(ctr.GetId()),
					client.ContainerStateName(state), cs.GetStatus().GetExitCode(), cs.GetStatus().GetReason())
				h.Outcome, h.Signature, h.Tried, h.Error = Fail, sigNotRunning, "CRI ContainerStatus of "+ctr.GetId(), what
				h.Cause, h.Fix = explainTarget(sigNotRunning, what)
				return
			}
		} else if state != runtimeapi.ContainerState_CONTAINER_RUNNING {
			what := fmt.Sprintf("container %s is %s", client.ShortID(ctr.GetId()), client.ContainerStateName(state))
			h.Outcome, h.Signature, h.Tried, h.Error = Fail, sigNotRunning, "CRI ListContainers", what
			h.Cause, h.Fix = explainTarget(sigNotRunning, what)
			return
		}
		if w.port != 0 {
			if ps, err := w.c.PodStatus(ctx, podID, false); err == nil && ps.GetStatus().GetState() != runtimeapi.PodSandboxState_SANDBOX_READY {
				what := fmt.Sprintf("pod %s is %s", client.ShortID(podID), client.PodStateName(ps.GetStatus().GetState()))
				h.Outcome, h.Signature, h.Tried, h.Error = Fail, sigPodNotReady, "CRI PodSandboxStatus of "+podID, what
				h.Cause, h.Fix = explainTarget(sigPodNotReady, what)
				return
			}
		}
		id = ctr.GetId()
		h.Detail = fmt.Sprintf("container %s (%s) running in pod %s", client.ShortID(id), ctr.GetMetadata().GetName(), client.ShortID(podID))
	})
	return id, h
}

// resolve takes the reference as a container, else as a pod whose first
// running container (else first container) is the target. With a pod
// given, the reference is a container of that pod only.
func (w *walker) resolve(ctx context.Context) (*runtimeapi.Container, string, error) {
	if w.pod != "" {
		pod, err := w.c.ResolvePod(ctx, w.pod)
		if err != nil {
			return nil, "", fmt.Errorf("--pod: %w", err)
		}
		ctr, err := w.c.ResolveContainerIn(ctx, w.ref, pod.GetId())
		if err != nil {
			return nil, "", fmt.Errorf("in pod %s (%s): %w", client.ShortID(pod.GetId()), pod.GetMetadata().GetName(), err)
		}
		return ctr, pod.GetId(), nil
	}
	ctr, err := w.c.ResolveContainer(ctx, w.ref)
	if err == nil {
		return ctr, ctr.GetPodSandboxId(), nil
	}
	if _, notFound := errors.AsType[*client.NotFoundError](err); !notFound {
		return nil, "", err
	}
	pod, perr := w.c.ResolvePod(ctx, w.ref)
	if perr != nil {
		if _, notFound := errors.AsType[*client.NotFoundError](perr); notFound {
			return nil, "", fmt.Errorf("%w; nor is it a pod", err)
		}
		return nil, "", perr
	}
	ctrs, err := w.c.ListContainers(ctx, client.ContainerFilter{PodID: pod.GetId()})
	if err != nil {
		return nil, "", err
	}
	if len(ctrs) == 0 {
		return nil, "", fmt.Errorf("pod %s (%s) has no containers", client.ShortID(pod.GetId()), pod.GetMetadata().GetName())
	}
	for _, c := range ctrs {
		if c.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING {
			return c, pod.GetId(), nil
		}
	}
	return ctrs[0], pod.GetId(), nil
}

// resolving says how the target was looked for.
func (w *walker) resolving() string {
	if w.pod != "" {
		return "resolving " + w.ref + " as a container of pod " + w.pod
	}
	return "resolving " + w.ref + " as a container, then as a pod"
}

func millis(d time.Duration) Millis { return Millis(d) }
