package client

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client/clienttest"
)

// streamingFake is clienttest's fake runtime holding container c1 (running)
// in pod p1, served, and a client of it whose calls get timeout.
func streamingFake(t *testing.T, timeout time.Duration) (*clienttest.Fake, *Client) {
	t.Helper()
	f := &clienttest.Fake{}
	f.AddPod(&runtimeapi.PodSandbox{Id: "p1", State: runtimeapi.PodSandboxState_SANDBOX_READY})
	f.AddContainer(&runtimeapi.Container{Id: "c1", PodSandboxId: "p1", State: runtimeapi.ContainerState_CONTAINER_RUNNING})
	c, err := Dial(Settings{RuntimeEndpoint: clienttest.Serve(t, f), RequestTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() }) // the test is over
	return f, c
}

// failing is a Before hook that fails every call to method with err.
func failing(method string, err error) func(context.Context, string, proto.Message) error {
	return func(_ context.Context, m string, _ proto.Message) error {
		if m == method {
			return err
		}
		return nil
	}
}

// Every URL a source hands out is a fresh call with the caller's request.
func TestURLSources(t *testing.T) {
	f, c := streamingFake(t, time.Second)
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
	if diff := cmp.Diff([]string{"http://stream/exec/1", "http://stream/exec/2", "http://stream/attach/3", "http://stream/portforward/4"}, urls); diff != "" {
		t.Errorf("URLs (-want +got):\n%s", diff)
	}
	want := []proto.Message{execReq, execReq, attachReq, &runtimeapi.PortForwardRequest{PodSandboxId: "p1", Port: []int32{80, 8080}}}
	if diff := cmp.Diff(want, f.Requests("Exec", "Attach", "PortForward"), protocmp.Transform()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// A failed call names the command, the call and the container.
func TestURLSourceError(t *testing.T) {
	f, c := streamingFake(t, 10*time.Second)
	notRunning := status.Error(codes.FailedPrecondition, "container is not running")
	f.Before = func(context.Context, string, proto.Message) error { return notRunning }
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
	t.Run("exits after a few polls", func(t *testing.T) {
		f, c := streamingFake(t, 10*time.Second)
		var polls atomic.Int32
		f.Before = func(_ context.Context, method string, _ proto.Message) error {
			if method == "ContainerStatus" && polls.Add(1) == 3 {
				f.SetExit("c1", 7) // running, running, then exited
			}
			return nil
		}
		code, err := c.WaitForExit(context.Background(), "c1", time.Minute)
		if err != nil || code != 7 {
			t.Errorf("WaitForExit = %d, %v; want 7, nil", code, err)
		}
	})
	t.Run("still running", func(t *testing.T) {
		_, c := streamingFake(t, 10*time.Second)
		if _, err := c.WaitForExit(context.Background(), "c1", 0); !errors.Is(err, ErrStillRunning) {
			t.Errorf("WaitForExit error %v, want ErrStillRunning", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		_, c := streamingFake(t, 10*time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := c.WaitForExit(ctx, "c1", time.Minute); !errors.Is(err, context.Canceled) {
			t.Errorf("WaitForExit error %v, want context.Canceled", err)
		}
	})
	t.Run("status unreadable", func(t *testing.T) {
		f, c := streamingFake(t, 10*time.Second)
		f.Before = failing("ContainerStatus", status.Error(codes.NotFound, "no such container"))
		_, err := c.WaitForExit(context.Background(), "c1", time.Minute)
		if err == nil || errors.Is(err, ErrStillRunning) || !strings.Contains(err.Error(), "no such container") {
			t.Errorf("WaitForExit error %v, want the status call's", err)
		}
	})
}

// ExecSync's timeout is the runtime's, in whole seconds, and bounds the
// call too; without one the call has no deadline.
func TestExecSync(t *testing.T) {
	f, c := streamingFake(t, time.Second)
	f.ExecSyncResponse = &runtimeapi.ExecSyncResponse{Stdout: []byte("out")}
	var mu sync.Mutex
	var deadlines []bool // per ExecSync call: did the runtime get a deadline
	f.Before = func(ctx context.Context, method string, _ proto.Message) error {
		if method == "ExecSync" {
			_, ok := ctx.Deadline()
			mu.Lock()
			deadlines = append(deadlines, ok)
			mu.Unlock()
		}
		return nil
	}
	seen := func() []bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(deadlines)
	}
	resp, err := c.ExecSync(context.Background(), "exec -s", "c1", []string{"true"}, 1500*time.Millisecond)
	if d := seen(); err != nil || string(resp.GetStdout()) != "out" || len(d) != 1 || !d[0] {
		t.Errorf("ExecSync with a timeout = %v, %v (deadlines %v); want out with a deadline", resp, err, d)
	}
	resp, err = c.ExecSync(context.Background(), "exec -s", "c1", []string{"true"}, 0)
	if d := seen(); err != nil || string(resp.GetStdout()) != "out" || len(d) != 2 || d[1] {
		t.Errorf("ExecSync without a timeout = %v, %v (deadlines %v); want no deadline", resp, err, d)
	}
	want := []proto.Message{
		&runtimeapi.ExecSyncRequest{ContainerId: "c1", Cmd: []string{"true"}, Timeout: 2},
		&runtimeapi.ExecSyncRequest{ContainerId: "c1", Cmd: []string{"true"}},
	}
	if diff := cmp.Diff(want, f.Requests("ExecSync"), protocmp.Transform()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// A full ID goes to the runtime as it is; the containers are listed only
// when the runtime does not know it: a name that looks like an ID is still
// found, and a ref that names nothing gets the lookup's error.
func TestUnresolvedExecSource(t *testing.T) {
	id := strings.Repeat("a1", 32)
	other := strings.Repeat("b2", 32)
	idLikeName := strings.Repeat("c3", 32)
	// clienttest's fake answers Exec for the IDs of its containers only, as
	// containerd does, and records the calls made.
	f, c := streamingFake(t, 10*time.Second)
	f.AddContainer(&runtimeapi.Container{Id: id, Metadata: &runtimeapi.ContainerMetadata{Name: "web"}})
	f.AddContainer(&runtimeapi.Container{Id: other, Metadata: &runtimeapi.ContainerMetadata{Name: idLikeName}})
	for _, tc := range []struct {
		ref, wantID, wantErr string
		wantCalls            []string
	}{
		{ref: id, wantID: id, wantCalls: []string{"Exec " + id}},
		{ref: idLikeName, wantID: other, wantCalls: []string{"Exec " + idLikeName, "ListContainers", "Exec " + other}},
		{ref: strings.Repeat("d4", 32), wantErr: `no container matches "` + strings.Repeat("d4", 32) + `"`,
			wantCalls: []string{"Exec " + strings.Repeat("d4", 32), "ListContainers"}},
	} {
		before := len(f.Calls())
		req := &runtimeapi.ExecRequest{Cmd: []string{"true"}}
		url, err := c.UnresolvedExecSource("exec", tc.ref, req)(context.Background())
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ref %.8s: error %v, want one containing %q", tc.ref, err, tc.wantErr)
			}
		} else if got, ok := f.Redeem(url); err != nil || !ok || got.(*runtimeapi.ExecRequest).GetContainerId() != tc.wantID {
			t.Errorf("ref %.8s: %q (for %v), %v; want a URL for container %.8s", tc.ref, url, got, err, tc.wantID)
		}
		if diff := cmp.Diff(tc.wantCalls, f.Calls()[before:]); diff != "" {
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

// TestShortIDAndNameSuffix: one length for every shortened ID, and the
// names crisp gives what it creates do not repeat.
func TestShortIDAndNameSuffix(t *testing.T) {
	for id, want := range map[string]string{"": "", "abc": "abc", "0123456789abcdef": "0123456789abc"} {
		if got := ShortID(id); got != want {
			t.Errorf("ShortID(%q) = %q, want %q", id, got, want)
		}
	}
	seen := map[string]bool{}
	for range 100 {
		s := NameSuffix()
		if len(s) != 8 || strings.Trim(s, "0123456789abcdef") != "" || seen[s] {
			t.Fatalf("NameSuffix() = %q: want 8 hex digits, new each time (seen %d)", s, len(seen))
		}
		seen[s] = true
	}
}
