package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// PodConfig is a minimal pod sandbox configuration: metadata with a fresh
// UID derived from the name and namespace, and the labels given.
func PodConfig(name, namespace, uid string, labels map[string]string) *runtimeapi.PodSandboxConfig {
	if namespace == "" {
		namespace = "default"
	}
	if uid == "" {
		uid = namespace + "-" + name
	}
	return &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: namespace, Uid: uid},
		Labels:   labels,
	}
}

// NameSuffix is eight random hex digits for the name of a pod or container
// crisp creates (smoke's scratch pod, a debug container), so that two runs
// at once never ask for the same name.
func NameSuffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it panics instead)
	return hex.EncodeToString(b[:])
}

// ContainerConfig is a minimal container configuration running image with
// command (empty means the image's own command).
func ContainerConfig(name, image string, command []string, tty, stdin bool) *runtimeapi.ContainerConfig {
	return &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name},
		Image:    &runtimeapi.ImageSpec{Image: image},
		Command:  command,
		Tty:      tty,
		Stdin:    stdin,
	}
}

// RunPod creates and starts a pod sandbox and returns its ID.
func (c *Client) RunPod(ctx context.Context, cfg *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error) {
	var resp *runtimeapi.RunPodSandboxResponse
	err := c.Call(ctx, fmt.Sprintf("creating pod %q", cfg.GetMetadata().GetName()), func(ctx context.Context) (err error) {
		resp, err = c.Runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg, RuntimeHandler: runtimeHandler})
		return err
	})
	if err != nil {
		return "", err
	}
	return resp.GetPodSandboxId(), nil
}

// CreateContainer creates a container in podID; podCfg must be the config the
// pod was created with (CRI asks for it again).
//
// The image's user_specified_image is set to its image when empty, as
// crictl and the kubelet do: a runtime that verifies signatures (CRI-O with
// signature_policy) refuses a create without it ("user specified image not
// specified, cannot verify image signature").
func (c *Client) CreateContainer(ctx context.Context, podID string, cfg *runtimeapi.ContainerConfig, podCfg *runtimeapi.PodSandboxConfig) (string, error) {
	if img := cfg.GetImage(); img != nil && img.GetUserSpecifiedImage() == "" {
		img.UserSpecifiedImage = img.GetImage()
	}
	var resp *runtimeapi.CreateContainerResponse
	err := c.Call(ctx, fmt.Sprintf("creating container %q in pod %s", cfg.GetMetadata().GetName(), podID), func(ctx context.Context) (err error) {
		resp, err = c.Runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
			PodSandboxId: podID, Config: cfg, SandboxConfig: podCfg,
		})
		return err
	})
	if err != nil {
		return "", err
	}
	return resp.GetContainerId(), nil
}

// StartContainer starts a created container.
func (c *Client) StartContainer(ctx context.Context, id string) error {
	return c.Call(ctx, "starting container "+id, func(ctx context.Context) error {
		_, err := c.Runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: id})
		return err
	})
}

// StopContainer stops a container, giving it timeoutSeconds before it is
// killed.
func (c *Client) StopContainer(ctx context.Context, id string, timeoutSeconds int64) error {
	return c.Call(ctx, "stopping container "+id, func(ctx context.Context) error {
		_, err := c.Runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: timeoutSeconds})
		return err
	})
}

// RemoveContainer removes a container (stopping it first is the caller's
// business; runtimes refuse or force as they see fit).
func (c *Client) RemoveContainer(ctx context.Context, id string) error {
	return c.Call(ctx, "removing container "+id, func(ctx context.Context) error {
		_, err := c.Runtime.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id})
		return err
	})
}

// StopPod stops a pod sandbox and its containers.
func (c *Client) StopPod(ctx context.Context, id string) error {
	return c.Call(ctx, "stopping pod "+id, func(ctx context.Context) error {
		_, err := c.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id})
		return err
	})
}

// RemovePod removes a pod sandbox and its containers.
func (c *Client) RemovePod(ctx context.Context, id string) error {
	return c.Call(ctx, "removing pod "+id, func(ctx context.Context) error {
		_, err := c.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id})
		return err
	})
}

// PullImage pulls image unless the image service already has it, and
// returns the image reference the runtime knows it by. pulled says whether a
// pull happened.
func (c *Client) PullImage(ctx context.Context, image string, podCfg *runtimeapi.PodSandboxConfig) (ref string, pulled bool, err error) {
	st, err := c.ImageStatus(ctx, image, false)
	if err != nil {
		return "", false, err
	}
	if img := st.GetImage(); img != nil {
		return img.GetId(), false, nil
	}
	var resp *runtimeapi.PullImageResponse
	err = c.CallImages(ctx, "pulling image "+image, func(ctx context.Context) (err error) {
		resp, err = c.Images.PullImage(ctx, &runtimeapi.PullImageRequest{
			Image: &runtimeapi.ImageSpec{Image: image}, SandboxConfig: podCfg,
		})
		return err
	})
	if err != nil {
		return "", false, err
	}
	return resp.GetImageRef(), true, nil
}

// Cleanup stops and removes a container and its pod, on every way out of a
// caller that created them. Pass a context that outlives the caller's
// cancellation (context.WithoutCancel plus a timeout) so an interrupted run
// still cleans up. Every failure is reported, not just the first; empty IDs
// are skipped.
func (c *Client) Cleanup(ctx context.Context, podID, containerID string) error {
	var errs []error
	if containerID != "" {
		if err := c.StopContainer(ctx, containerID, 0); err != nil {
			errs = append(errs, err)
		}
		if err := c.RemoveContainer(ctx, containerID); err != nil {
			errs = append(errs, err)
		}
	}
	if podID != "" {
		if err := c.StopPod(ctx, podID); err != nil {
			errs = append(errs, err)
		}
		if err := c.RemovePod(ctx, podID); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// UpdateContainerResources changes a container's resource limits.
func (c *Client) UpdateContainerResources(ctx context.Context, id string, res *runtimeapi.ContainerResources) error {
	return c.Call(ctx, "updating the resources of container "+id, func(ctx context.Context) error {
		_, err := c.Runtime.UpdateContainerResources(ctx, &runtimeapi.UpdateContainerResourcesRequest{
			ContainerId: id, Linux: res.GetLinux(), Windows: res.GetWindows(),
		})
		return err
	})
}

// CheckpointContainer checkpoints a running container into location (a
// tar archive path on the runtime's host).
func (c *Client) CheckpointContainer(ctx context.Context, id, location string) error {
	return c.Call(ctx, "checkpointing container "+id, func(ctx context.Context) error {
		_, err := c.Runtime.CheckpointContainer(ctx, &runtimeapi.CheckpointContainerRequest{ContainerId: id, Location: location})
		return err
	})
}

// ReopenContainerLog asks the runtime to reopen a container's log file
// (after it was rotated away).
func (c *Client) ReopenContainerLog(ctx context.Context, id string) error {
	return c.Call(ctx, "reopening the log of container "+id, func(ctx context.Context) error {
		_, err := c.Runtime.ReopenContainerLog(ctx, &runtimeapi.ReopenContainerLogRequest{ContainerId: id})
		return err
	})
}

// PullImageWith pulls image with auth (nil: anonymous), for podCfg, and
// returns the reference the runtime knows it by. Unlike PullImage it pulls
// even when the image is present (the registry may hold a newer one).
func (c *Client) PullImageWith(ctx context.Context, image string, auth *runtimeapi.AuthConfig, podCfg *runtimeapi.PodSandboxConfig) (string, error) {
	var resp *runtimeapi.PullImageResponse
	err := c.CallImages(ctx, "pulling image "+image, func(ctx context.Context) (err error) {
		resp, err = c.Images.PullImage(ctx, &runtimeapi.PullImageRequest{
			Image: &runtimeapi.ImageSpec{Image: image}, Auth: auth, SandboxConfig: podCfg,
		})
		return err
	})
	if err != nil {
		return "", err
	}
	return resp.GetImageRef(), nil
}
