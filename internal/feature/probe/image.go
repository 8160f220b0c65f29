package probe

import (
	"context"
	"errors"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
)

// Lifecycle is the part of the CRI that smoke --image needs; *client.Client
// implements it.
type Lifecycle interface {
	PullImage(ctx context.Context, image string, podCfg *runtimeapi.PodSandboxConfig) (ref string, pulled bool, err error)
	RunPod(ctx context.Context, cfg *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error)
	CreateContainer(ctx context.Context, podID string, cfg *runtimeapi.ContainerConfig, podCfg *runtimeapi.PodSandboxConfig) (string, error)
	StartContainer(ctx context.Context, id string) error
	Cleanup(ctx context.Context, podID, containerID string) error
}

// smokeCommand is what smoke --image runs in its container: long-running,
// and printing, so the attach check has output to read. With a port it also
// serves a TCP echo there for the port-forward checks, where the image has
// busybox's nc (-ll: a server that outlives each connection).
func smokeCommand(port int32) []string {
	script := "while :; do echo crisp-smoke; sleep 0.2; done"
	if port > 0 {
		script = fmt.Sprintf("if command -v nc >/dev/null 2>&1; then nc -ll -p %d -e cat & fi; %s", port, script)
	}
	return []string{"sh", "-c", script}
}

// SmokeLabel marks what smoke --image creates, so leftovers can be found.
const SmokeLabel = "crisp.smoke"

// Scratch is a pod and container created for a run.
type Scratch struct {
	PodID, ContainerID string
	// Pulled says whether the image had to be pulled.
	Pulled bool
}

// WithScratch creates a pod (from podCfg, or a fresh minimal one) and a
// long-running container from image (pulled if missing; an echo server on
// port when port > 0), calls run with
// them, and removes both on every way out: run's failure, a cancelled ctx
// (SIGINT), a timeout or a panic. logf says what is created and removed.
// When creating or starting the container fails, setupFailed (if set) is
// asked before anything is removed; an error from it goes first (the
// pod was taken away by someone else, say).
func WithScratch(ctx context.Context, lc Lifecycle, image string, port int32, podCfg *runtimeapi.PodSandboxConfig, logf func(string, ...any), setupFailed func(ctx context.Context, s Scratch) error, run func(ctx context.Context, s Scratch) error) (err error) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	suffix := client.NameSuffix()
	if podCfg == nil {
		podCfg = client.PodConfig("crisp-smoke-"+suffix, "default", "crisp-smoke-"+suffix, map[string]string{SmokeLabel: "true"})
	}
	var s Scratch
	defer func() {
		if s.PodID == "" && s.ContainerID == "" {
			return
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), client.CleanupTimeout)
		defer cancel()
		cerr := lc.Cleanup(cctx, s.PodID, s.ContainerID)
		if cerr != nil {
			err = errors.Join(err, fmt.Errorf("removing what smoke created (pod %s, container %s) failed; remove them by hand (crictl rmp -f %s): %w", s.PodID, s.ContainerID, s.PodID, cerr))
			return
		}
		logf("removed container %s and pod %s", s.ContainerID, s.PodID)
	}()
	ref, pulled, err := lc.PullImage(ctx, image, podCfg)
	if err != nil {
		return fmt.Errorf("image %s: %w", image, err)
	}
	s.Pulled = pulled
	if pulled {
		logf("pulled %s (%s)", image, ref)
	}
	// The pod's creation runs to its end even when ctx ends meanwhile: a
	// RunPodSandbox cut short on the client's side can still create the pod
	// on the runtime's, and then nobody knows its ID to remove it (a 30 ms
	// --timeout left one behind). Its own bound is the removal's.
	create, cancel := context.WithTimeout(context.WithoutCancel(ctx), client.CleanupTimeout)
	s.PodID, err = lc.RunPod(create, podCfg, "")
	cancel()
	if err != nil {
		return err
	}
	logf("created pod %s", s.PodID)
	if err := ctx.Err(); err != nil {
		return err // interrupted or out of time while the pod was made: it goes again
	}
	ctrCfg := client.ContainerConfig("crisp-smoke", image, smokeCommand(port), false, false)
	ctrCfg.Labels = map[string]string{SmokeLabel: "true"}
	explain := func(err error) error {
		if setupFailed == nil {
			return err
		}
		if why := setupFailed(ctx, s); why != nil {
			return fmt.Errorf("%w (%w)", why, err)
		}
		return err
	}
	s.ContainerID, err = lc.CreateContainer(ctx, s.PodID, ctrCfg, podCfg)
	if err != nil {
		return explain(err)
	}
	if err := lc.StartContainer(ctx, s.ContainerID); err != nil {
		return explain(err)
	}
	logf("started container %s from %s", s.ContainerID, image)
	return run(ctx, s)
}
