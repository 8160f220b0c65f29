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
