package main

import (
	"context"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/client/clienttest"
	"github.com/crisp-cri/crisp/internal/feature/session"
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
		rt := newFakeRuntime(t, fakeContainer)
		deps, _, _ := fakeDeps(rt, &fakeStreamer{}, "", false)
		code, err := runAttach(t, deps, strings.Fields(args)...)
		if err == nil || !strings.Contains(err.Error(), want) || code != cmdutil.ExitCrispFailure {
			t.Errorf("attach %s: exit %d err %v, want 125 and %q", args, code, err, want)
		}
		if len(rt.attaches()) > 0 {
			t.Errorf("attach %s reached the runtime", args)
		}
	}
}

func TestAttachDetachKeys(t *testing.T) {
	rt := newFakeRuntime(t, fakeContainer)
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
	if attaches := rt.attaches(); len(attaches) == 0 || attaches[0].String() != want.String() {
		t.Errorf("AttachRequests %v, want %v", attaches, want)
	}
}

func TestAttachPassesContainerExitStatus(t *testing.T) {
	rt := newFakeRuntime(t, fakeContainer)
	rt.Before = exitsAfter("Attach", 1, rt.Fake, 4) // the session's process ends the container
	deps, _, _ := fakeDeps(rt, &fakeStreamer{}, "", false)
	if code, err := runAttach(t, deps, "web"); code != 4 {
		t.Errorf("exit %d (%v), want the container's 4", code, err)
	}
}

// exitsAfter is a Before hook for clienttest's fake: the container exits
// with code as the n-th call to method arrives.
func exitsAfter(method string, n int32, f *clienttest.Fake, code int32) func(context.Context, string, proto.Message) error {
	var calls atomic.Int32
	return func(_ context.Context, m string, _ proto.Message) error {
		if m == method && calls.Add(1) == n {
			f.SetExit(fakeContainer.Id, code)
		}
		return nil
	}
}

// A loaded containerd records an exit more than a second after the attach
// stream ended (a 1 s bound turned `exit 5` into exit 0 in the containerd
// suite): attach's default wait outlasts that.
func TestAttachWaitsForALateExit(t *testing.T) {
	// The runtime records the exit only after the attach stream has ended,
	// as containerd does: its status says running for the first calls.
	rt := newFakeRuntime(t, fakeContainer)
	late := time.Second + 250*time.Millisecond
	rt.Before = exitsAfter("ContainerStatus", int32(late/client.ExitPollInterval)+1, rt.Fake, 5)
	deps, _, _ := fakeDeps(rt, &fakeStreamer{}, "", false)
	o := &attachOptions{deps: deps, Attach: session.Attach{ExitWait: attachExitWait}}
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
	rt := newFakeRuntime(t, exited)
	deps, _, _ := fakeDeps(rt, &fakeStreamer{}, "", false)
	code, err := runAttach(t, deps, "web")
	if code != cmdutil.ExitCrispFailure || err == nil || !strings.Contains(err.Error(), "not running") {
		t.Errorf("exit %d err %v, want 125 and 'not running'", code, err)
	}
}
