package clienttest

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The calls that hand out streaming URLs, and ExecSync. Like a runtime's,
// each URL is fresh and good for one session: Redeem tells a fake streaming
// server which request a URL was for, once. With Fake.Streaming set, the
// URLs are that server's.

// StreamingServer is what hands out a runtime's streaming URLs (the mock's
// streamserver.Server is one).
type StreamingServer interface {
	GetExec(*runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error)
	GetAttach(*runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error)
	GetPortForward(*runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error)
}

// Exec hands out a URL for a stored container, or NotFound.
func (f *Fake) Exec(ctx context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	if err := f.enter(ctx, "Exec", req, req.ContainerId); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.container(req.ContainerId) == nil {
		return nil, status.Errorf(codes.NotFound, "container %q: not found", req.ContainerId)
	}
	if f.Streaming != nil {
		return f.Streaming.GetExec(req)
	}
	return &runtimeapi.ExecResponse{Url: f.streamURL("exec", req)}, nil
}

// Attach hands out a URL for a stored container, or NotFound.
func (f *Fake) Attach(ctx context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	if err := f.enter(ctx, "Attach", req, req.ContainerId); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.container(req.ContainerId) == nil {
		return nil, status.Errorf(codes.NotFound, "container %q: not found", req.ContainerId)
	}
	if f.Streaming != nil {
		return f.Streaming.GetAttach(req)
	}
	return &runtimeapi.AttachResponse{Url: f.streamURL("attach", req)}, nil
}

// PortForward hands out a URL for a stored pod, or NotFound.
func (f *Fake) PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	if err := f.enter(ctx, "PortForward", req, req.PodSandboxId); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pod(req.PodSandboxId) == nil {
		return nil, status.Errorf(codes.NotFound, "pod sandbox %q: not found", req.PodSandboxId)
	}
	if f.Streaming != nil {
		return f.Streaming.GetPortForward(req)
	}
	return &runtimeapi.PortForwardResponse{Url: f.streamURL("portforward", req)}, nil
}

// streamURL makes the next URL for call and remembers req for Redeem.
func (f *Fake) streamURL(call string, req proto.Message) string {
	base := f.StreamBase
	if base == "" {
		base = "http://stream"
	}
	if f.urls == nil {
		f.urls = map[string]proto.Message{}
	}
	f.nextID++
	u := fmt.Sprintf("%s/%s/%d", strings.TrimSuffix(base, "/"), call, f.nextID)
	f.urls[u] = proto.Clone(req)
	return u
}

// Redeem returns the request a streaming URL was handed out for (an
// *ExecRequest, *AttachRequest or *PortForwardRequest), once: a URL used
// before, or never handed out, gets false.
func (f *Fake) Redeem(url string) (proto.Message, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	req, ok := f.urls[url]
	delete(f.urls, url)
	return req, ok
}

// ExecSync answers ExecSyncResponse for a stored container, or NotFound.
func (f *Fake) ExecSync(ctx context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	if err := f.enter(ctx, "ExecSync", req, req.ContainerId); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.container(req.ContainerId) == nil {
		return nil, status.Errorf(codes.NotFound, "container %q: not found", req.ContainerId)
	}
	if f.ExecSyncResponse == nil {
		return &runtimeapi.ExecSyncResponse{}, nil
	}
	return proto.Clone(f.ExecSyncResponse).(*runtimeapi.ExecSyncResponse), nil
}

// SetExit marks a stored container exited with code, as ContainerStatus
// then reports it.
func (f *Fake) SetExit(id string, code int32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.container(id); c != nil {
		c.State = runtimeapi.ContainerState_CONTAINER_EXITED
	}
	if f.exitCodes == nil {
		f.exitCodes = map[string]int32{}
	}
	f.exitCodes[id] = code
}
