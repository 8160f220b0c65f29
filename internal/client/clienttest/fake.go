// Package clienttest is a fake CRI runtime for crisp's client-side tests: an
// in-memory RuntimeService and ImageService served over gRPC on a short unix
// socket, holding the pods, containers and images a test puts in it and
// recording the requests it gets. It hands out streaming URLs (and says
// which request each was for) but runs no processes and serves no streams:
// tests pair it with the mock's streaming server (Fake.Streaming), and
// end-to-end tests use the mock runtime (internal/mockruntime).
package clienttest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Fake is an in-memory CRI runtime. Its fields may be set until the first
// call arrives (after Serve too); once calls arrive, use the methods.
type Fake struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer

	// IgnoreFilters makes List calls return everything, as a careless
	// runtime might, to prove crisp filters on its side too.
	IgnoreFilters bool
	// RuntimeName is the name Version reports ("fake" when empty).
	RuntimeName string
	// StreamBase starts the streaming URLs Exec, Attach and PortForward
	// hand out ("http://stream" when empty): StreamBase/exec/1, and so on,
	// fresh for every call (streaming.go).
	StreamBase string
	// Streaming, when set, is the streaming server Exec, Attach and
	// PortForward get their URLs from instead, as a runtime asks the one it
	// embeds: the mock's (internal/mockruntime/streamserver) driven
	// in-process over internal/testsupport/toyshell, the one fake streaming
	// backend of crisp's tests.
	Streaming StreamingServer
	// ExecSyncResponse is ExecSync's answer (an empty one when nil).
	ExecSyncResponse *runtimeapi.ExecSyncResponse
	// Before, when set, runs as each call arrives, with the method's name
	// ("Exec") and request, outside the fake's lock: it may change the fake
	// (SetExit, AddContainer) to script what this call and later ones see,
	// and an error it returns is the call's answer (a runtime's failure).
	Before func(ctx context.Context, method string, req proto.Message) error

	mu         sync.Mutex
	pods       []*runtimeapi.PodSandbox
	containers []*runtimeapi.Container
	images     []*runtimeapi.Image
	exitCodes  map[string]int32 // SetExit's
	calls      []string
	requests   []recorded
	urls       map[string]proto.Message // streaming URLs not yet redeemed
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

// Requests returns the requests of the calls to methods ("Exec",
// "ExecSync"; every method when none is named) so far, in order.
func (f *Fake) Requests(methods ...string) []proto.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []proto.Message
	for _, r := range f.requests {
		if len(methods) == 0 || slices.Contains(methods, r.method) {
			out = append(out, proto.Clone(r.req))
		}
	}
	return out
}

// enter starts every call: it runs Before and records the call, its main
// argument (arg) and its request, refused or not. A non-nil error is the
// call's answer.
func (f *Fake) enter(ctx context.Context, method string, req proto.Message, arg string) error {
	var err error
	if f.Before != nil {
		err = f.Before(ctx, method, req)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if arg != "" {
		method += " " + arg
	}
	f.calls = append(f.calls, method)
	f.requests = append(f.requests, recorded{method: strings.Fields(method)[0], req: proto.Clone(req)})
	return err
}

// recorded is one call's method and request.
type recorded struct {
	method string
	req    proto.Message
}

// Version reports a fixed runtime identity.
func (f *Fake) Version(ctx context.Context, req *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	if err := f.enter(ctx, "Version", req, ""); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	name := f.RuntimeName
	if name == "" {
		name = "fake"
	}
	return &runtimeapi.VersionResponse{Version: "0.1.0", RuntimeName: name, RuntimeVersion: "0.0.1", RuntimeApiVersion: "v1"}, nil
}

// Status reports a ready runtime.
func (f *Fake) Status(ctx context.Context, req *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	if err := f.enter(ctx, "Status", req, ""); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
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
func (f *Fake) ListPodSandbox(ctx context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	if err := f.enter(ctx, "ListPodSandbox", req, ""); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
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
func (f *Fake) ListContainers(ctx context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	if err := f.enter(ctx, "ListContainers", req, ""); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
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
func (f *Fake) PodSandboxStatus(ctx context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	if err := f.enter(ctx, "PodSandboxStatus", req, req.PodSandboxId); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
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
func (f *Fake) ContainerStatus(ctx context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	if err := f.enter(ctx, "ContainerStatus", req, req.ContainerId); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.containers {
		if c.Id == req.ContainerId {
			resp := &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{
				Id: c.Id, Metadata: c.Metadata, State: c.State, CreatedAt: c.CreatedAt,
				Image: c.Image, ImageRef: c.ImageRef, Labels: c.Labels, Annotations: c.Annotations,
				ExitCode: f.exitCodes[c.Id],
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
func (f *Fake) ListImages(ctx context.Context, req *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	if err := f.enter(ctx, "ListImages", req, ""); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
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
func (f *Fake) ImageStatus(ctx context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	ref := req.GetImage().GetImage()
	if err := f.enter(ctx, "ImageStatus", req, ref); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
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
func (f *Fake) PullImage(ctx context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	ref := req.GetImage().GetImage()
	if err := f.enter(ctx, "PullImage", req, ref); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
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
func (f *Fake) RunPodSandbox(ctx context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	if err := f.enter(ctx, "RunPodSandbox", req, req.GetConfig().GetMetadata().GetName()); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.newID()
	f.pods = append(f.pods, &runtimeapi.PodSandbox{
		Id: id, Metadata: req.GetConfig().GetMetadata(), State: runtimeapi.PodSandboxState_SANDBOX_READY,
		Labels: req.GetConfig().GetLabels(),
	})
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: id}, nil
}

// CreateContainer stores a created container in an existing pod.
func (f *Fake) CreateContainer(ctx context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	if err := f.enter(ctx, "CreateContainer", req, req.GetConfig().GetMetadata().GetName()); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
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
func (f *Fake) StartContainer(ctx context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	if err := f.enter(ctx, "StartContainer", req, req.ContainerId); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.container(req.ContainerId)
	if c == nil {
		return nil, status.Errorf(codes.NotFound, "container %q not found", req.ContainerId)
	}
	c.State = runtimeapi.ContainerState_CONTAINER_RUNNING
	return &runtimeapi.StartContainerResponse{}, nil
}

// StopContainer marks a container exited.
func (f *Fake) StopContainer(ctx context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	if err := f.enter(ctx, "StopContainer", req, req.ContainerId); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.container(req.ContainerId); c != nil {
		c.State = runtimeapi.ContainerState_CONTAINER_EXITED
	}
	return &runtimeapi.StopContainerResponse{}, nil
}

// RemoveContainer forgets a container.
func (f *Fake) RemoveContainer(ctx context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	if err := f.enter(ctx, "RemoveContainer", req, req.ContainerId); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.containers = removeByID(f.containers, req.ContainerId, (*runtimeapi.Container).GetId)
	return &runtimeapi.RemoveContainerResponse{}, nil
}

// StopPodSandbox marks a pod not ready and its containers exited.
func (f *Fake) StopPodSandbox(ctx context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	if err := f.enter(ctx, "StopPodSandbox", req, req.PodSandboxId); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
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
func (f *Fake) RemovePodSandbox(ctx context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	if err := f.enter(ctx, "RemovePodSandbox", req, req.PodSandboxId); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
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
