package crossval

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// TestMockEventShapes compares the events of one pod as crictl and crisp
// stream them (events -o json), both subscribed before the pod is made.
func TestMockEventShapes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds crisp and runs crictl: not in -short")
	}
	e := setup(t)
	crictl := e.background(t, e.crictlBin, []string{"-r", e.endpoint, "-i", e.endpoint, "events", "-o", "json"},
		"CRI_CONFIG_FILE="+e.crictlConfig)
	crisp := e.background(t, e.crispBin, []string{"events", "-o", "json"}, "CONTAINER_RUNTIME_ENDPOINT="+e.endpoint)
	// Nothing says when a stream is subscribed: make pods until both have
	// reported one; then both see all of the next pod's events.
	n := 0
	runp := func() string {
		n++
		pod := e.write(t, fmt.Sprintf("ev%d.json", n), fmt.Sprintf(`{"metadata": {"name": "ev%d", "namespace": "crossval", "uid": "ev%d"}}`, n, n))
		return strings.TrimSpace(string(e.crictl(t, "runp", pod)))
	}
	polls := 0
	testkit.Eventually(t, time.Minute, func() bool {
		if polls++; polls%20 == 1 { // a pod every 200 ms
			runp()
		}
		return strings.Contains(crictl.String(), "containerEventType") && strings.Contains(crisp.String(), "containerEventType")
	}, "no event from crictl or crisp:\ncrictl:\n%s\ncrisp:\n%s", crictl, crisp)
	id := runp()
	var want, got []byte
	testkit.Eventually(t, time.Minute, func() bool {
		var err1, err2 error
		want, err1 = EventsOf([]byte(crictl.String()), id)
		got, err2 = EventsOf([]byte(crisp.String()), id)
		return err1 == nil && err2 == nil && len(want) > 0 && len(got) > 0 && bytes.Count(want, []byte("\n")) == bytes.Count(got, []byte("\n"))
	}, "the events of pod %s did not reach both:\ncrictl:\n%s\ncrisp:\n%s", id, crictl, crisp)
	diffs, paths, err := Compare(want, got)
	if err != nil {
		t.Fatal(err)
	}
	if paths < 10 {
		t.Errorf("only %d paths compared:\n%s", paths, want)
	}
	for _, d := range diffs {
		t.Errorf("crisp events: %s", d)
	}
	t.Logf("events of pod %s: %d paths compared with crictl's, %d differ", id, paths, len(diffs))
}

// background runs bin with args until the end of the test, its stdout
// collected.
func (e *mockEnv) background(t *testing.T, bin string, args []string, env ...string) *testkit.LockedBuffer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(cleanEnv(), env...)
	cmd.WaitDelay = 5 * time.Second
	out := &testkit.LockedBuffer{}
	cmd.Stdout = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait() // killed: its exit says nothing
	})
	return out
}
