package client

import (
	"context"
	"fmt"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ContainerStatus asks for one container's status by full ID; verbose asks
// the runtime for its extra info map too.
func (c *Client) ContainerStatus(ctx context.Context, id string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	var resp *runtimeapi.ContainerStatusResponse
	err := c.Call(ctx, "container status of "+id, func(ctx context.Context) (err error) {
		resp, err = c.Runtime.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id, Verbose: verbose})
		return err
	})
	return resp, err
}

// PodStatus asks for one pod sandbox's status by full ID.
func (c *Client) PodStatus(ctx context.Context, id string, verbose bool) (*runtimeapi.PodSandboxStatusResponse, error) {
	var resp *runtimeapi.PodSandboxStatusResponse
	err := c.Call(ctx, "pod status of "+id, func(ctx context.Context) (err error) {
		resp, err = c.Runtime.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id, Verbose: verbose})
		return err
	})
	return resp, err
}

// ImageStatus asks the image service about ref (a name, tag or ID). A
// missing image is not an error: the response's Image is nil, as CRI says.
func (c *Client) ImageStatus(ctx context.Context, ref string, verbose bool) (*runtimeapi.ImageStatusResponse, error) {
	var resp *runtimeapi.ImageStatusResponse
	err := c.CallImages(ctx, "image status of "+ref, func(ctx context.Context) (err error) {
		resp, err = c.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{
			Image: &runtimeapi.ImageSpec{Image: ref}, Verbose: verbose,
		})
		return err
	})
	return resp, err
}

// ImageNotFoundError means the image service does not have an image.
type ImageNotFoundError struct{ Ref, Endpoint string }

func (e *ImageNotFoundError) Error() string {
	return fmt.Sprintf("no image %q on runtime %s; list them with `crisp images`", e.Ref, e.Endpoint)
}

// InspectImage is ImageStatus that treats a missing image as an error.
func (c *Client) InspectImage(ctx context.Context, ref string, verbose bool) (*runtimeapi.ImageStatusResponse, error) {
	resp, err := c.ImageStatus(ctx, ref, verbose)
	if err != nil {
		return nil, err
	}
	if resp.GetImage() == nil {
		return nil, &ImageNotFoundError{Ref: ref, Endpoint: c.imageEndpoint()}
	}
	return resp, nil
}
