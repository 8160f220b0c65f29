package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/client/podspec"
)

// Create creates a container from the config at ctrPath in the pod podRef
// (pod config at podPath, which CRI asks for again) and prints its ID.
func Create(ctx context.Context, c *client.Client, podRef, ctrPath, podPath string, pull Pull, out, errOut io.Writer) error {
	cfg, podCfg, err := loadConfigs(ctx, ctrPath, podPath)
	if err != nil {
		return err
	}
	pod, err := c.ResolvePod(ctx, podRef)
	if err != nil {
		return err
	}
	if err := ensureImage(ctx, c, cfg, podCfg, pull, errOut); err != nil {
		return err
	}
	id, err := c.CreateContainer(ctx, pod.GetId(), cfg, podCfg)
	if err != nil {
		return err
	}
	if err := printID(out, "%s", id); err != nil {
		return err
	}
	return nil
}

// loadConfigs reads the container config at ctrPath and the pod config at
// podPath, which CRI asks for with the container's.
func loadConfigs(ctx context.Context, ctrPath, podPath string) (*runtimeapi.ContainerConfig, *runtimeapi.PodSandboxConfig, error) {
	cfg, err := podspec.LoadContainer(ctx, ctrPath)
	if err != nil {
		return nil, nil, err
	}
	podCfg, err := podspec.LoadPod(ctx, podPath)
	if err != nil {
		return nil, nil, err
	}
	return cfg, podCfg, nil
}

// Start starts each created container, in order.
func Start(ctx context.Context, c *client.Client, refs []string, out io.Writer) error {
	ctrs, err := containerIDs(ctx, c, refs, false, false)
	if err != nil {
		return err
	}
	return each(ctrs, out, "%s", func(id string) error { return c.StartContainer(ctx, id) })
}

// Run runs a pod from podPath and a container from ctrPath in it, started,
// and prints the container's ID. Both files are read before anything is
// created, and whatever this run created is removed again when a later
// step fails (or is interrupted).
//
// Only what this run provably created is removed: a runtime may answer a
// RunPodSandbox whose metadata matches an existing pod with that pod's ID
// (CRI-O does), and that pod, made by somebody else, stays. The pod is this
// run's only when its ID was not among the pods listed just before.
func Run(ctx context.Context, c *client.Client, ctrPath, podPath, handler string, pull Pull, out, errOut io.Writer) (err error) {
	cfg, podCfg, err := loadConfigs(ctx, ctrPath, podPath)
	if err != nil {
		return err
	}
	var podID, ctrID string
	podOurs := false
	var notOurs string // why the pod is not this run's to remove
	defer func() {
		if err == nil || (ctrID == "" && (podID == "" || !podOurs)) {
			if err != nil && podID != "" {
				notice(errOut, "left pod %s in place: %s", podID, notOurs)
			}
			return
		}
		rmPod := podID
		if !podOurs {
			rmPod = ""
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), client.CleanupTimeout)
		defer cancel()
		if cerr := c.Cleanup(cctx, rmPod, ctrID); cerr != nil {
			err = fmt.Errorf("%w; removing what was created failed too: %w", err, cerr)
			return
		}
		switch {
		case ctrID != "" && podOurs:
			notice(errOut, "removed container %s and pod %s, which the failed run had created", ctrID, podID)
		case ctrID != "":
			notice(errOut, "removed container %s, which the failed run had created; left pod %s in place: %s", ctrID, podID, notOurs)
		default:
			notice(errOut, "removed pod %s, which the failed run had created", podID)
		}
	}()
	warnOnKubelet(ctx, c, podCfg, errOut)
	existing, listErr := existingPodIDs(ctx, c)
	if podID, err = c.RunPod(ctx, podCfg, handler); err != nil {
		return err
	}
	podOurs = listErr == nil && !existing[podID]
	switch {
	case listErr != nil:
		notOurs = fmt.Sprintf("this run cannot tell whether it created it (listing the pods before failed: %v)", listErr)
	case !podOurs:
		notOurs = "it existed before this run (the runtime returned it for the pod config's metadata)"
		notice(errOut, "pod %s existed already: the runtime returned it for this pod config's metadata; the container runs in it", podID)
	}
	if err = ensureImage(ctx, c, cfg, podCfg, pull, errOut); err != nil {
		return err
	}
	if ctrID, err = c.CreateContainer(ctx, podID, cfg, podCfg); err != nil {
		return err
	}
	if err = c.StartContainer(ctx, ctrID); err != nil {
		return err
	}
	if err := printID(out, "%s", ctrID); err != nil {
		return err
	}
	return nil
}

// existingPodIDs is the set of the IDs of every pod there is now.
func existingPodIDs(ctx context.Context, c *client.Client) (map[string]bool, error) {
	pods, err := c.ListPods(ctx, client.PodFilter{})
	if err != nil {
		return nil, err
	}
	ids := make(map[string]bool, len(pods))
	for _, p := range pods {
		ids[p.GetId()] = true
	}
	return ids, nil
}

// Stop stops each container (every running one with all), giving each
// timeout seconds before it is killed.
func Stop(ctx context.Context, c *client.Client, refs []string, all bool, timeout int64, out, errOut io.Writer) error {
	ctrs, err := containerIDs(ctx, c, refs, all, true)
	if err != nil {
		return err
	}
	if all && len(ctrs) == 0 {
		notice(errOut, "no running containers")
		return nil
	}
	return each(ctrs, out, "%s", func(id string) error { return c.StopContainer(ctx, id, timeout) })
}

// Remove removes each container (every one with all). A running container
// is removed only with force, which stops it first. As crictl does, the
// log file and its rotations go too unless keepLogs. Every container is
// tried; the failures are reported together.
func Remove(ctx context.Context, c *client.Client, refs []string, all, force, keepLogs bool, out, errOut io.Writer) error {
	ctrs, err := containerIDs(ctx, c, refs, all, false)
	if err != nil {
		return err
	}
	if all && len(ctrs) == 0 {
		notice(errOut, "no containers to remove")
		return nil
	}
	var errs []error
	for _, ctr := range ctrs {
		if err := remove(ctx, c, ctr, force, keepLogs, errOut); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := printID(out, "%s", ctr.GetId()); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

func remove(ctx context.Context, c *client.Client, ctr *runtimeapi.Container, force, keepLogs bool, errOut io.Writer) error {
	id := ctr.GetId()
	st, err := c.ContainerStatus(ctx, id, false)
	if err != nil {
		return err
	}
	if st.GetStatus().GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING {
		if !force {
			return fmt.Errorf("container %s (%s) is running; stop it first with `crisp stop %s`, or use rm -f",
				id, ctr.GetMetadata().GetName(), id)
		}
		if err := c.StopContainer(ctx, id, 0); err != nil {
			return err
		}
	}
	if err := c.RemoveContainer(ctx, id); err != nil {
		return err
	}
	if logPath := st.GetStatus().GetLogPath(); logPath != "" && !keepLogs {
		rotated, _ := filepath.Glob(logPath + ".*") // the pattern is valid: Glob fails on bad patterns only
		for _, f := range append(rotated, logPath) {
			if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
				notice(errOut, "removing log file %s of container %s: %v", f, id, err)
			}
		}
	}
	return nil
}

// Update changes the resources of each container.
func Update(ctx context.Context, c *client.Client, refs []string, res *runtimeapi.ContainerResources, out io.Writer) error {
	ctrs, err := containerIDs(ctx, c, refs, false, false)
	if err != nil {
		return err
	}
	return each(ctrs, out, "%s", func(id string) error { return c.UpdateContainerResources(ctx, id, res) })
}

// Checkpoint checkpoints each container into the archive export.
func Checkpoint(ctx context.Context, c *client.Client, refs []string, export string, out io.Writer) error {
	ctrs, err := containerIDs(ctx, c, refs, false, false)
	if err != nil {
		return err
	}
	return each(ctrs, out, "%s", func(id string) error { return c.CheckpointContainer(ctx, id, export) })
}
