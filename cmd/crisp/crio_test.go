package main

import (
	"strings"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
)

// crisp against the mock imitating CRI-O (mockruntime.CRIO): the behaviours
// that containerd never showed.

// CRI-O ends an attach stream when the client's stdin ends, and at once
// without -i, while the container runs on: crisp says the container is
// still running and exits 0, rather than waiting out its exit wait and
// exiting silently.
func TestAttachOnCRIOSaysTheContainerRunsOn(t *testing.T) {
	skipInShort(t)
	env := mocktest.Start(t, mockruntime.Config{Quirks: mockruntime.CRIO})
	pod := env.RunPod(t, "attach")
	ctr := env.RunContainer(t, pod, mocktest.ContainerSpec{Name: "sh", Command: []string{"sh"}, Stdin: true})

	cmd := crispCmd(t, env.Endpoint, "attach", "-i", ctr)
	cmd.Stdin = strings.NewReader("echo hello-attach\n")
	stdout, stderr, code := runCaptured(t, cmd, "crisp attach -i")
	if code != 0 || !strings.Contains(stderr, "ended the stream when stdin ended") || !strings.Contains(stderr, "is still running") {
		t.Errorf("crisp attach -i with stdin that ends: exit %d, stdout %q, stderr %q; want exit 0 and the container said to run on", code, stdout, stderr)
	}

	stdout, stderr, code = crispRun(t, env.Endpoint, "attach", ctr)
	if code != 0 || !strings.Contains(stderr, "as no stdin was sent") || !strings.Contains(stderr, "is still running") {
		t.Errorf("crisp attach without -i: exit %d, stdout %q, stderr %q; want exit 0, why the stream ended, and the container said to run on", code, stdout, stderr)
	}
}

// With --reconnect too: a stream that ended with the input is not a break
// to re-attach after (a fresh Attach would only end again, forever).
func TestAttachReconnectOnCRIOEndsWithTheInput(t *testing.T) {
	skipInShort(t)
	env := mocktest.Start(t, mockruntime.Config{Quirks: mockruntime.CRIO})
	pod := env.RunPod(t, "attach")
	ctr := env.RunContainer(t, pod, mocktest.ContainerSpec{Name: "sh", Command: []string{"sh"}, Stdin: true})
	cmd := crispCmd(t, env.Endpoint, "attach", "--reconnect", ctr)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
		case <-time.After(time.Minute): // a hang guard, not a timing assertion
			_ = cmd.Process.Kill() // the test fails below on the kill's status
		}
	}()
	stdout, stderr, code := runCaptured(t, cmd, "crisp attach --reconnect")
	if code != 0 || !strings.Contains(stderr, "is still running") || strings.Contains(stderr, "re-attached") {
		t.Errorf("crisp attach --reconnect without -i: exit %d, stdout %q, stderr %q; want exit 0, the container said to run on, no re-attach", code, stdout, stderr)
	}
}

// When the runtime closes the event stream (CRI-O unless enable_pod_events),
// crisp says so, and exits 0 as crictl does.
func TestEventsSaysTheRuntimeClosedTheStream(t *testing.T) {
	skipInShort(t)
	env := mocktest.Start(t, mockruntime.Config{Quirks: mockruntime.CRIO})
	stdout, stderr, code := crispRun(t, env.Endpoint, "events")
	if code != 0 || !strings.Contains(stderr, "closed the container event stream") || !strings.Contains(stderr, "enable_pod_events") {
		t.Errorf("crisp events on a runtime that closes the stream: exit %d, stdout %q, stderr %q; want exit 0 and the closing said", code, stdout, stderr)
	}
}
