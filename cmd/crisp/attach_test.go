package main

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/cri/client"
)

func runAttach(t *testing.T, deps streamDeps, args ...string) (int, error) {
	t.Helper()
	o := &attachOptions{deps: deps}
	cmd := attachCommand(&cmdutil.Factory{Streams: deps.Streams}, o)
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.ExecuteContext(context.Background())
	return cmdutil.ExitStatus(err, true), err
}

func TestAttachFlags(t *testing.T) {
	for args, want := range map[string]string{
		"":                         "exactly one CONTAINER",
		"a b":                      "exactly one CONTAINER",
		"--detach-keys ctrl-7 web": "--detach-keys",
		"--transport x web":        "unknown transport",
	} {
		rt := &fakeRuntime{containers: []*runtimeapi.Container{fakeContainer}}
		deps, _, _ := fakeDeps(rt, &fakeStreamer{}, "", false)
		code, err := runAttach(t, deps, strings.Fields(args)...)
		if err == nil || !strings.Contains(err.Error(), want) || code != cmdutil.ExitCrispFailure {
			t.Errorf("attach %s: exit %d err %v, want 125 and %q", args, code, err, want)
		}
		if len(rt.attaches) > 0 {
			t.Errorf("attach %s reached the runtime", args)
		}
	}
}

func TestAttachDetachKeys(t *testing.T) {
	rt := &fakeRuntime{containers: []*runtimeapi.Container{fakeContainer}}
	st := &fakeStreamer{read: true}
	deps, out, _ := fakeDeps(rt, st, "hello\x10\x11after", false)
	code, err := runAttach(t, deps, "-i", "web")
	if code != 0 {
		t.Fatalf("exit %d (%v), want 0 after detaching", code, err)
	}
	if out.String() != "remote output\n" {
		t.Errorf("stdout %q", out)
	}
	want := &runtimeapi.AttachRequest{ContainerId: fakeContainer.Id, Stdin: true, Stdout: true, Stderr: true}
	if len(rt.attaches) == 0 || rt.attaches[0].String() != want.String() {
		t.Errorf("AttachRequests %v, want %v", rt.attaches, want)
	}
}

func TestAttachPassesContainerExitStatus(t *testing.T) {
	rt := &fakeRuntime{
		containers: []*runtimeapi.Container{fakeContainer},
		status:     &runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_EXITED, ExitCode: 4},
	}
	deps, _, _ := fakeDeps(rt, &fakeStreamer{}, "", false)
	if code, err := runAttach(t, deps, "web"); code != 4 {
		t.Errorf("exit %d (%v), want the container's 4", code, err)
	}
}

// lateExitRuntime records the container's exit only after the attach stream
// has ended, as containerd does: its status says running for the first
// running calls.
type lateExitRuntime struct {
	*fakeRuntime
	running int

	mu    sync.Mutex
	calls int
}

func (r *lateExitRuntime) ContainerStatus(ctx context.Context, req *runtimeapi.ContainerStatusRequest, opts ...grpc.CallOption) (*runtimeapi.ContainerStatusResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls++; r.calls <= r.running {
		return &runtimeapi.ContainerStatusResponse{Status: &runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_RUNNING}}, nil
	}
	return r.fakeRuntime.ContainerStatus(ctx, req, opts...)
}

// A loaded containerd records an exit more than a second after the attach
// stream ended (a 1 s bound turned `exit 5` into exit 0 in the containerd
// suite): attach's default wait outlasts that.
func TestAttachWaitsForALateExit(t *testing.T) {
	fake := &fakeRuntime{
		containers: []*runtimeapi.Container{fakeContainer},
		status:     &runtimeapi.ContainerStatus{State: runtimeapi.ContainerState_CONTAINER_EXITED, ExitCode: 5},
	}
	late := time.Second + 250*time.Millisecond
	rt := &lateExitRuntime{fakeRuntime: fake, running: int(late / client.ExitPollInterval)}
	deps, _, _ := fakeDeps(fake, &fakeStreamer{}, "", false)
	deps.Dial = func(client.Settings) (*client.Client, error) {
		return &client.Client{Endpoint: "unix:///fake.sock", Runtime: rt}, nil
	}
	o := &attachOptions{deps: deps, exitWait: attachExitWait}
	cmd := attachCommand(&cmdutil.Factory{Streams: deps.Streams}, o)
	cmd.SetArgs([]string{"web"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.ExecuteContext(context.Background())
	if code := cmdutil.ExitStatus(err, true); code != 5 {
		t.Errorf("exit %d (%v) when the runtime records the exit %v after the stream ended, want the container's 5", code, err, late)
	}
}

func TestAttachNotRunning(t *testing.T) {
	exited := &runtimeapi.Container{Id: fakeContainer.Id, Metadata: fakeContainer.Metadata, State: runtimeapi.ContainerState_CONTAINER_EXITED}
	rt := &fakeRuntime{containers: []*runtimeapi.Container{exited}}
	deps, _, _ := fakeDeps(rt, &fakeStreamer{}, "", false)
	code, err := runAttach(t, deps, "web")
	if code != cmdutil.ExitCrispFailure || err == nil || !strings.Contains(err.Error(), "not running") {
		t.Errorf("exit %d err %v, want 125 and 'not running'", code, err)
	}
}
