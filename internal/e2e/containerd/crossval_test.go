package containerd

import (
	"strings"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/testsupport/crossval"
)

// TestCrossvalShapes runs crisp and crictl on the same objects of each
// containerd (the harness's pod, its sleeping container, the busybox image)
// and requires every JSON and YAML output of crisp's data commands to have
// crictl's paths, each with crictl's type. A difference fails with its path.
func TestCrossvalShapes(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		o := crossval.Objects{Container: h.Ctr, Pod: h.Pod, Image: h.BusyboxImage}
		total, compared := 0, 0
		for _, c := range crossval.Cases(o) {
			t.Run(c.Name, func(t *testing.T) {
				// Figures change between the two runs (a first CPU sample
				// is null, the next a number): a difference is measured
				// again, and only one that stays fails.
				var r crossval.Result
				var want, got Result
				for attempt := 1; attempt <= 3; attempt++ {
					want, got = h.crictl(t, c.Args...), h.crisp(t, c.Args...)
					if want.ExitCode != 0 || got.ExitCode != 0 {
						t.Fatalf("%s:\ncrictl: %v\ncrisp: %v", strings.Join(c.Args, " "), want, got)
					}
					var err error
					if r, err = c.Check([]byte(want.Stdout), []byte(got.Stdout)); err != nil {
						t.Fatalf("%v\ncrictl:\n%s\ncrisp:\n%s", err, want.Stdout, got.Stdout)
					}
					if len(r.Differences) == 0 {
						break
					}
					t.Logf("attempt %d: %d paths differ:\n%s", attempt, len(r.Differences), r)
				}
				// Something real is compared: the harness's objects, not
				// an empty list.
				if r.Paths < 5 {
					t.Errorf("only %d paths compared: crictl printed\n%s", r.Paths, want.Stdout)
				}
				total += r.Paths
				compared++
				if len(r.Differences) > 0 {
					t.Errorf("crisp %s on %s: %d paths differ from crictl's:\n%s\ncrictl:\n%s\ncrisp:\n%s",
						strings.Join(c.Args, " "), h.Name, len(r.Differences), r, truncate(want.Stdout), truncate(got.Stdout))
				}
			})
		}
		t.Logf("%s: %d outputs compared with crictl's, %d paths", h.Name, compared, total)
	})
}

// TestCrossvalEventShapes compares one container's events as crictl and
// crisp stream them (events -o json), both subscribed before it is made, on
// the runtimes that stream events (TestCrispEvents asserts what crisp says
// on the others).
func TestCrossvalEventShapes(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		if h.spec.serves.events != eventsStreamed {
			t.Skipf("%s serves no container events (TestCrispEvents asserts crisp's error)", h.Name)
		}
		crictl := startBackground(t, h.crictlCmd(t, t.Context(), "events", "-o", "json"))
		crisp := startBackground(t, h.crispCmd(t, t.Context(), "events", "-o", "json"))
		// Nothing says when a stream is subscribed: make containers until
		// both have reported one; then both see all of the next one's events.
		deadline := time.Now().Add(time.Minute)
		for !strings.Contains(crictl.Output(), "containerEventType") || !strings.Contains(crisp.Output(), "containerEventType") {
			if time.Now().After(deadline) {
				t.Fatalf("no event from crictl or crisp:\ncrictl:\n%s\ncrisp:\n%s", crictl.Output(), crisp.Output())
			}
			h.newContainer(t, ContainerSpec{Name: "cv-events"})
		}
		id := h.newContainer(t, ContainerSpec{Name: "cv-events"})
		var want, got []byte
		for {
			var err1, err2 error
			want, err1 = crossval.EventsOf([]byte(crictl.Output()), id)
			got, err2 = crossval.EventsOf([]byte(crisp.Output()), id)
			// created and started, from each.
			if err1 == nil && err2 == nil && strings.Count(string(want), "\n") >= 2 && strings.Count(string(got), "\n") >= 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the events of %s did not reach both:\ncrictl:\n%s\ncrisp:\n%s", id, truncate(crictl.Output()), truncate(crisp.Output()))
			}
			time.Sleep(200 * time.Millisecond)
		}
		diffs, paths, err := crossval.Compare(want, got)
		if err != nil {
			t.Fatal(err)
		}
		if paths < 10 {
			t.Errorf("only %d paths compared:\n%s", paths, want)
		}
		for _, d := range diffs {
			t.Errorf("crisp events on %s: %s", h.Name, d)
		}
		t.Logf("%s: events of container %s: %d paths compared with crictl's, %d differ", h.Name, id, paths, len(diffs))
	})
}
