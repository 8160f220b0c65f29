// Package clienttest is a fake CRI runtime for crisp's client-side tests: an
// in-memory RuntimeService and ImageService served over gRPC on a short unix
// socket, holding the pods, containers and images a test puts in it and
// recording the requests it gets. It runs no processes and serves no
// streams; end-to-end tests use the mock runtime (internal/mockruntime).
package clienttest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Fake is an in-memory CRI runtime. Its fields may be set before Serve and
// read after; while serving, use the methods.
type Fake struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer

	// IgnoreFilters makes List calls return everything, as a careless
	// runtime might, to prove crisp filters on its side too.
	IgnoreFilters bool

	mu         sync.Mutex
	pods       []*runtimeapi.PodSandbox
	containers []*runtimeapi.Container
	images     []*runtimeapi.Image
	calls      []string
	nextID     int
}

// Serve starts f on a unix socket in a short temporary folder and returns
// its endpoint; the server stops and the folder goes at t.Cleanup.
func Serve(t testing.TB, f *Fake) string {
	t.Helper()
	// Unix socket paths are limited to 108 bytes: t.TempDir can be longer.
	dir, err := os.MkdirTemp("", "crisp-fake")
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "cri.sock")
	lis, err := net.Listen("unix", sock)
	if err != nil {
		_ = os.RemoveAll(dir)
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(srv, f)
	runtimeapi.RegisterImageServiceServer(srv, f)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
		_ = os.RemoveAll(dir)
	})
	return "unix://" + sock
}

// AddPod stores a pod; its ID, state and creation time are kept as given.
func (f *Fake) AddPod(p *runtimeapi.PodSandbox) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pods = append(f.pods, p)
}

// AddContainer stores a container.
func (f *Fake) AddContainer(c *runtimeapi.Container) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.containers = append(f.containers, c)
}

// AddImage stores an image.
func (f *Fake) AddImage(img *runtimeapi.Image) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.images = append(f.images, img)
}

// Calls returns the names of the CRI methods called so far, in order, each
// with its main argument (e.g. "StopContainer c1").
func (f *Fake) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *Fake) record(format string, args ...any) {
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

// Version reports a fixed runtime identity.
func (f *Fake) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("Version")
	return &runtimeapi.VersionResponse{Version: "0.1.0", RuntimeName: "fake", RuntimeVersion: "0.0.1", RuntimeApiVersion: "v1"}, nil
}

// Status reports a ready runtime.
func (f *Fake) Status(context.Context, *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("Status")
	return &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		{Type: "RuntimeReady", Status: true}, {Type: "NetworkReady", Status: true},
	}}}, nil
}

func labelsMatch(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// ListPodSandbox applies CRI's filters (exact ID, state, labels).
func (f *Fake) ListPodSandbox(_ context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("ListPodSandbox")
	flt := req.GetFilter()
	var out []*runtimeapi.PodSandbox
	for _, p := range f.pods {
		if !f.IgnoreFilters && flt != nil {
			if flt.Id != "" && p.Id != flt.Id ||
				flt.State != nil && p.State != flt.State.State ||
				!labelsMatch(p.Labels, flt.LabelSelector) {
				continue
			}
		}
		out = append(out, proto.Clone(p).(*runtimeapi.PodSandbox))
	}
	return &runtimeapi.ListPodSandboxResponse{Items: out}, nil
}

// ListContainers applies CRI's filters (exact ID, state, pod, labels).
func (f *Fake) ListContainers(_ context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("ListContainers")
	flt := req.GetFilter()
	var out []*runtimeapi.Container
	for _, c := range f.containers {
		if !f.IgnoreFilters && flt != nil {
			if flt.Id != "" && c.Id != flt.Id ||
				flt.State != nil && c.State != flt.State.State ||
				flt.PodSandboxId != "" && c.PodSandboxId != flt.PodSandboxId ||
				!labelsMatch(c.Labels, flt.LabelSelector) {
				continue
			}
		}
		out = append(out, proto.Clone(c).(*runtimeapi.Container))
	}
	return &runtimeapi.ListContainersResponse{Containers: out}, nil
}

// PodSandboxStatus reports a stored pod.
func (f *Fake) PodSandboxStatus(_ context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("PodSandboxStatus %s", req.PodSandboxId)
	for _, p := range f.pods {
		if p.Id == req.PodSandboxId {
			resp := &runtimeapi.PodSandboxStatusResponse{Status: &runtimeapi.PodSandboxStatus{
				Id: p.Id, Metadata: p.Metadata, State: p.State, CreatedAt: p.CreatedAt,
				Labels: p.Labels, Annotations: p.Annotations, RuntimeHandler: p.RuntimeHandler,
				Network: &runtimeapi.PodSandboxNetworkStatus{Ip: "127.0.0.1"},
			}}
			if req.Verbose {
				resp.Info = map[string]string{"info": `{"fake":true}`}
			}
			return resp, nil
		}
	}
	return nil, status.Errorf(codes.NotFound, "pod sandbox %q not found", req.PodSandboxId)
}

// ContainerStatus reports a stored container.
func (f *Fake) ContainerStatus(_ context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("ContainerStatus %s", req.ContainerId)
	for _, c := range f.containers {
		if c.Id == req.ContainerId {
			resp := &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{
				Id: c.Id, Metadata: c.Metadata, State: c.State, CreatedAt: c.CreatedAt,
				Image: c.Image, ImageRef: c.ImageRef, Labels: c.Labels, Annotations: c.Annotations,
			}}
			if req.Verbose {
				resp.Info = map[string]string{"info": `{"pid":42}`}
			}
			return resp, nil
		}
	}
	return nil, status.Errorf(codes.NotFound, "container %q not found", req.ContainerId)
}

// ListImages filters by an exact tag or ID when asked.
func (f *Fake) ListImages(_ context.Context, req *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("ListImages")
	want := req.GetFilter().GetImage().GetImage()
	var out []*runtimeapi.Image
	for _, img := range f.images {
		if want != "" && !imageMatches(img, want) {
			continue
		}
		out = append(out, proto.Clone(img).(*runtimeapi.Image))
	}
	return &runtimeapi.ListImagesResponse{Images: out}, nil
}

func imageMatches(img *runtimeapi.Image, ref string) bool {
	if img.Id == ref || strings.TrimPrefix(img.Id, "sha256:") == ref {
		return true
	}
	for _, tag := range img.RepoTags {
		if tag == ref || !strings.Contains(ref, ":") && tag == ref+":latest" {
			return true
		}
	}
	return false
}

// ImageStatus reports a stored image, or a nil image when there is none.
func (f *Fake) ImageStatus(_ context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ref := req.GetImage().GetImage()
	f.record("ImageStatus %s", ref)
	for _, img := range f.images {
		if imageMatches(img, ref) {
			resp := &runtimeapi.ImageStatusResponse{Image: proto.Clone(img).(*runtimeapi.Image)}
			if req.Verbose {
				resp.Info = map[string]string{"info": `{"layers":1}`}
			}
			return resp, nil
		}
	}
	return &runtimeapi.ImageStatusResponse{}, nil
}

// PullImage adds the image under the name asked for.
func (f *Fake) PullImage(_ context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ref := req.GetImage().GetImage()
	f.record("PullImage %s", ref)
	f.nextID++
	id := fmt.Sprintf("sha256:%064x", f.nextID)
	f.images = append(f.images, &runtimeapi.Image{Id: id, RepoTags: []string{ref}, Size: 1 << 20})
	return &runtimeapi.PullImageResponse{ImageRef: id}, nil
}

func (f *Fake) newID() string {
	f.nextID++
	return fmt.Sprintf("%064x", 0xf00d0000+f.nextID)
}

// RunPodSandbox stores a ready pod.
func (f *Fake) RunPodSandbox(_ context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("RunPodSandbox %s", req.GetConfig().GetMetadata().GetName())
	id := f.newID()
	f.pods = append(f.pods, &runtimeapi.PodSandbox{
		Id: id, Metadata: req.GetConfig().GetMetadata(), State: runtimeapi.PodSandboxState_SANDBOX_READY,
		Labels: req.GetConfig().GetLabels(),
	})
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: id}, nil
}

// CreateContainer stores a created container in an existing pod.
func (f *Fake) CreateContainer(_ context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("CreateContainer %s", req.GetConfig().GetMetadata().GetName())
	if f.pod(req.PodSandboxId) == nil {
		return nil, status.Errorf(codes.NotFound, "pod sandbox %q not found", req.PodSandboxId)
	}
	id := f.newID()
	f.containers = append(f.containers, &runtimeapi.Container{
		Id: id, PodSandboxId: req.PodSandboxId, Metadata: req.GetConfig().GetMetadata(),
		Image: req.GetConfig().GetImage(), State: runtimeapi.ContainerState_CONTAINER_CREATED,
		Labels: req.GetConfig().GetLabels(),
	})
	return &runtimeapi.CreateContainerResponse{ContainerId: id}, nil
}

func (f *Fake) pod(id string) *runtimeapi.PodSandbox {
	for _, p := range f.pods {
		if p.Id == id {
			return p
		}
	}
	return nil
}

func (f *Fake) container(id string) *runtimeapi.Container {
	for _, c := range f.containers {
		if c.Id == id {
			return c
		}
	}
	return nil
}

// StartContainer marks a container running.
func (f *Fake) StartContainer(_ context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("StartContainer %s", req.ContainerId)
	c := f.container(req.ContainerId)
	if c == nil {
		return nil, status.Errorf(codes.NotFound, "container %q not found", req.ContainerId)
	}
	c.State = runtimeapi.ContainerState_CONTAINER_RUNNING
	return &runtimeapi.StartContainerResponse{}, nil
}

// StopContainer marks a container exited.
func (f *Fake) StopContainer(_ context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("StopContainer %s", req.ContainerId)
	if c := f.container(req.ContainerId); c != nil {
		c.State = runtimeapi.ContainerState_CONTAINER_EXITED
	}
	return &runtimeapi.StopContainerResponse{}, nil
}

// RemoveContainer forgets a container.
func (f *Fake) RemoveContainer(_ context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("RemoveContainer %s", req.ContainerId)
	f.containers = removeByID(f.containers, req.ContainerId, (*runtimeapi.Container).GetId)
	return &runtimeapi.RemoveContainerResponse{}, nil
}

// StopPodSandbox marks a pod not ready and its containers exited.
func (f *Fake) StopPodSandbox(_ context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("StopPodSandbox %s", req.PodSandboxId)
	if p := f.pod(req.PodSandboxId); p != nil {
		p.State = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	}
	for _, c := range f.containers {
		if c.PodSandboxId == req.PodSandboxId {
			c.State = runtimeapi.ContainerState_CONTAINER_EXITED
		}
	}
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

// RemovePodSandbox forgets a pod and its containers.
func (f *Fake) RemovePodSandbox(_ context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("RemovePodSandbox %s", req.PodSandboxId)
	f.pods = removeByID(f.pods, req.PodSandboxId, (*runtimeapi.PodSandbox).GetId)
	kept := f.containers[:0]
	for _, c := range f.containers {
		if c.PodSandboxId != req.PodSandboxId {
			kept = append(kept, c)
		}
	}
	f.containers = kept
	return &runtimeapi.RemovePodSandboxResponse{}, nil
}

func removeByID[T any](items []T, id string, getID func(T) string) []T {
	out := items[:0]
	for _, it := range items {
		if getID(it) != id {
			out = append(out, it)
		}
	}
	return out
}
