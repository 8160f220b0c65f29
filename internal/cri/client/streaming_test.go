package client

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// urlRuntime hands out a fresh URL per streaming call and records the
// requests; statuses are the container statuses it answers in turn (the
// last one repeats).
type urlRuntime struct {
	runtimeapi.RuntimeServiceClient // calls not faked panic

	err      error
	statuses []*runtimeapi.ContainerStatus

	mu   sync.Mutex
	reqs []any
}

func (r *urlRuntime) record(req any) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
	return "http://stream/" + strings.Repeat("x", len(r.reqs)), r.err
}

func (r *urlRuntime) Exec(_ context.Context, req *runtimeapi.ExecRequest, _ ...grpc.CallOption) (*runtimeapi.ExecResponse, error) {
	u, err := r.record(req)
	return &runtimeapi.ExecResponse{Url: u}, err
}

func (r *urlRuntime) Attach(_ context.Context, req *runtimeapi.AttachRequest, _ ...grpc.CallOption) (*runtimeapi.AttachResponse, error) {
	u, err := r.record(req)
	return &runtimeapi.AttachResponse{Url: u}, err
}

func (r *urlRuntime) PortForward(_ context.Context, req *runtimeapi.PortForwardRequest, _ ...grpc.CallOption) (*runtimeapi.PortForwardResponse, error) {
	u, err := r.record(req)
	return &runtimeapi.PortForwardResponse{Url: u}, err
}

func (r *urlRuntime) ContainerStatus(_ context.Context, req *runtimeapi.ContainerStatusRequest, _ ...grpc.CallOption) (*runtimeapi.ContainerStatusResponse, error) {
	if r.err != nil {
		return nil, r.err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
	st := r.statuses[0]
	if len(r.statuses) > 1 {
		r.statuses = r.statuses[1:]
	}
	return &runtimeapi.ContainerStatusResponse{Status: st}, nil
}

// Every URL a source hands out is a fresh call with the caller's request.
func TestURLSources(t *testing.T) {
	rt := &urlRuntime{}
	c := &Client{Endpoint: "unix:///r.sock", Runtime: rt, Timeout: time.Second}
	ctx := context.Background()
	execReq := &runtimeapi.ExecRequest{ContainerId: "c1", Cmd: []string{"true"}}
	attachReq := &runtimeapi.AttachRequest{ContainerId: "c1", Stdout: true}
	var urls []string
	for _, src := range []func(context.Context) (string, error){
		c.ExecSource("exec", execReq), c.ExecSource("exec", execReq), c.AttachSource("attach", attachReq),
		func(ctx context.Context) (string, error) {
			return c.PortForwardSource("", "p1")(ctx, []uint16{80, 8080})
		},
	} {
		u, err := src(ctx)
		if err != nil {
			t.Fatal(err)
		}
		urls = append(urls, u)
	}
	if diff := cmp.Diff([]string{"http://stream/x", "http://stream/xx", "http://stream/xxx", "http://stream/xxxx"}, urls); diff != "" {
		t.Errorf("URLs (-want +got):\n%s", diff)
	}
	want := []any{execReq, execReq, attachReq, &runtimeapi.PortForwardRequest{PodSandboxId: "p1", Port: []int32{80, 8080}}}
	if diff := cmp.Diff(want, rt.reqs, protocmp.Transform()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// A failed call names the command, the call and the container.
func TestURLSourceError(t *testing.T) {
	rt := &urlRuntime{err: status.Error(codes.FailedPrecondition, "container is not running")}
	c := &Client{Endpoint: "unix:///r.sock", Runtime: rt}
	_, err := c.ExecSource("exec", &runtimeapi.ExecRequest{ContainerId: "0123456789abcdef"})(context.Background())
	if want := "exec: Exec call for container 0123456789abc: container is not running (FailedPrecondition)"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	_, err = c.PortForwardSource("", "pod1")(context.Background(), nil)
	if want := "PortForward call for pod pod1: "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want it to start %q", err, want)
	}
}

func TestWaitForExit(t *testing.T) {
	running := &runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_RUNNING}
	exited := &runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_EXITED, ExitCode: 7}
	t.Run("exits after a few polls", func(t *testing.T) {
		c := &Client{Runtime: &urlRuntime{statuses: []*runtimeapi.ContainerStatus{running, running, exited}}}
		code, err := c.WaitForExit(context.Background(), "c1", time.Minute)
		if err != nil || code != 7 {
			t.Errorf("WaitForExit = %d, %v; want 7, nil", code, err)
		}
	})
	t.Run("still running", func(t *testing.T) {
		c := &Client{Runtime: &urlRuntime{statuses: []*runtimeapi.ContainerStatus{running}}}
		if _, err := c.WaitForExit(context.Background(), "c1", 0); !errors.Is(err, ErrStillRunning) {
			t.Errorf("WaitForExit error %v, want ErrStillRunning", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		c := &Client{Runtime: &urlRuntime{statuses: []*runtimeapi.ContainerStatus{running}}}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := c.WaitForExit(ctx, "c1", time.Minute); !errors.Is(err, context.Canceled) {
			t.Errorf("WaitForExit error %v, want context.Canceled", err)
		}
	})
	t.Run("status unreadable", func(t *testing.T) {
		c := &Client{Runtime: &urlRuntime{err: status.Error(codes.NotFound, "no such container")}}
		_, err := c.WaitForExit(context.Background(), "c1", time.Minute)
		if err == nil || errors.Is(err, ErrStillRunning) || !strings.Contains(err.Error(), "no such container") {
			t.Errorf("WaitForExit error %v, want the status call's", err)
		}
	})
}

func (r *urlRuntime) ExecSync(ctx context.Context, req *runtimeapi.ExecSyncRequest, _ ...grpc.CallOption) (*runtimeapi.ExecSyncResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
	_, hasDeadline := ctx.Deadline()
	return &runtimeapi.ExecSyncResponse{Stdout: []byte("out"), ExitCode: map[bool]int32{true: 1, false: 0}[hasDeadline]}, nil
}

// ExecSync's timeout is the runtime's, in whole seconds, and bounds the
// call too; without one the call has no deadline.
func TestExecSync(t *testing.T) {
	rt := &urlRuntime{}
	c := &Client{Runtime: rt, Timeout: time.Second}
	resp, err := c.ExecSync(context.Background(), "exec -s", "c1", []string{"true"}, 1500*time.Millisecond)
	if err != nil || string(resp.GetStdout()) != "out" || resp.GetExitCode() != 1 {
		t.Errorf("ExecSync with a timeout = %v, %v; want out with a deadline", resp, err)
	}
	resp, err = c.ExecSync(context.Background(), "exec -s", "c1", []string{"true"}, 0)
	if err != nil || resp.GetExitCode() != 0 {
		t.Errorf("ExecSync without a timeout = %v, %v; want no deadline", resp, err)
	}
	want := []any{
		&runtimeapi.ExecSyncRequest{ContainerId: "c1", Cmd: []string{"true"}, Timeout: 2},
		&runtimeapi.ExecSyncRequest{ContainerId: "c1", Cmd: []string{"true"}},
	}
	if diff := cmp.Diff(want, rt.reqs, protocmp.Transform()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// idRuntime answers Exec for the IDs of its containers only, as containerd
// does, and records the calls made.
type idRuntime struct {
	runtimeapi.RuntimeServiceClient // calls not faked panic
	containers                      []*runtimeapi.Container
	calls                           []string
}

func (r *idRuntime) Exec(_ context.Context, req *runtimeapi.ExecRequest, _ ...grpc.CallOption) (*runtimeapi.ExecResponse, error) {
	r.calls = append(r.calls, "Exec "+req.ContainerId)
	for _, c := range r.containers {
		if c.Id == req.ContainerId {
			return &runtimeapi.ExecResponse{Url: "http://stream/" + c.Id}, nil
		}
	}
	return nil, status.Errorf(codes.NotFound, "container %q: not found", req.ContainerId)
}

func (r *idRuntime) ListContainers(context.Context, *runtimeapi.ListContainersRequest, ...grpc.CallOption) (*runtimeapi.ListContainersResponse, error) {
	r.calls = append(r.calls, "ListContainers")
	return &runtimeapi.ListContainersResponse{Containers: r.containers}, nil
}

// A full ID goes to the runtime as it is; the containers are listed only
// when the runtime does not know it: a name that looks like an ID is still
// found, and a ref that names nothing gets the lookup's error.
func TestUnresolvedExecSource(t *testing.T) {
	id := strings.Repeat("a1", 32)
	other := strings.Repeat("b2", 32)
	idLikeName := strings.Repeat("c3", 32)
	rt := &idRuntime{containers: []*runtimeapi.Container{
		{Id: id, Metadata: &runtimeapi.ContainerMetadata{Name: "web"}},
		{Id: other, Metadata: &runtimeapi.ContainerMetadata{Name: idLikeName}},
	}}
	c := &Client{Endpoint: "unix:///r.sock", Runtime: rt}
	for _, tc := range []struct {
		ref, wantURL, wantErr string
		wantCalls             []string
	}{
		{ref: id, wantURL: "http://stream/" + id, wantCalls: []string{"Exec " + id}},
		{ref: idLikeName, wantURL: "http://stream/" + other, wantCalls: []string{"Exec " + idLikeName, "ListContainers", "Exec " + other}},
		{ref: strings.Repeat("d4", 32), wantErr: `no container matches "` + strings.Repeat("d4", 32) + `"`,
			wantCalls: []string{"Exec " + strings.Repeat("d4", 32), "ListContainers"}},
	} {
		rt.calls = nil
		req := &runtimeapi.ExecRequest{Cmd: []string{"true"}}
		url, err := c.UnresolvedExecSource("exec", tc.ref, req)(context.Background())
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ref %.8s: error %v, want one containing %q", tc.ref, err, tc.wantErr)
			}
		} else if err != nil || url != tc.wantURL {
			t.Errorf("ref %.8s: %q, %v; want %q", tc.ref, url, err, tc.wantURL)
		}
		if diff := cmp.Diff(tc.wantCalls, rt.calls); diff != "" {
			t.Errorf("ref %.8s: calls (-want +got):\n%s", tc.ref, diff)
		}
	}
}

func TestIsFullID(t *testing.T) {
	for ref, want := range map[string]bool{
		strings.Repeat("0f", 32): true,
		strings.Repeat("0F", 32): false, // runtimes make lowercase IDs
		strings.Repeat("0f", 31): false,
		strings.Repeat("0g", 32): false,
		"web":                    false,
	} {
		if got := IsFullID(ref); got != want {
			t.Errorf("IsFullID(%q) = %v, want %v", ref, got, want)
		}
	}
}
