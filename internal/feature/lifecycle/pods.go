package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/client/podspec"
)

// RunPod creates and starts the pod sandbox of the config file at path
// and prints its ID; on a kubelet's runtime it warns first (warnOnKubelet).
func RunPod(ctx context.Context, c *client.Client, path, handler string, out, errOut io.Writer) error {
	cfg, err := podspec.LoadPod(ctx, path)
	if err != nil {
		return err
	}
	warnOnKubelet(ctx, c, cfg, errOut)
	id, err := c.RunPod(ctx, cfg, handler)
	if err != nil {
		return err
	}
	if err := printID(out, "%s", id); err != nil {
		return err
	}
	return nil
}

// StopPods stops each pod, in order, and stops at the first failure.
func StopPods(ctx context.Context, c *client.Client, refs []string, out io.Writer) error {
	pods, err := podIDs(ctx, c, refs, false)
	if err != nil {
		return err
	}
	return each(pods, out, "Stopped sandbox %s", func(id string) error { return c.StopPod(ctx, id) })
}

// RemovePods removes each pod (every pod with all). A ready pod is removed
// only with force, which stops it first. Every pod is tried; the failures
// are reported together.
func RemovePods(ctx context.Context, c *client.Client, refs []string, all, force bool, out, errOut io.Writer) error {
	pods, err := podIDs(ctx, c, refs, all)
	if err != nil {
		return err
	}
	if all && len(pods) == 0 {
		notice(errOut, "no pods to remove")
		return nil
	}
	var errs []error
	for _, p := range pods {
		if p.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			if !force {
				errs = append(errs, fmt.Errorf("pod %s (%s) is ready (running); stop it first with `crisp stopp %s`, or use rmp -f",
					p.GetId(), p.GetMetadata().GetName(), p.GetId()))
				continue
			}
			if err := c.StopPod(ctx, p.GetId()); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		if err := c.RemovePod(ctx, p.GetId()); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := printID(out, "Removed sandbox %s", p.GetId()); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

// warnOnKubelet warns, before crisp creates a pod that is not the kubelet's
// on a runtime a kubelet manages (client.KubeletPods), that the kubelet will
// stop and remove it within seconds. A failure to list is left to the
// creation that follows.
func warnOnKubelet(ctx context.Context, c *client.Client, cfg *runtimeapi.PodSandboxConfig, errOut io.Writer) {
	if client.IsKubeletPod(cfg) {
		return
	}
	pods, err := c.KubeletPods(ctx)
	if err != nil || len(pods) == 0 {
		return
	}
	notice(errOut, "warning: a kubelet manages this runtime (%d pods carry its %s label, e.g. %s): it stops and removes every pod it did not create within seconds",
		len(pods), client.KubeletPodUIDLabel, pods[0])
}
