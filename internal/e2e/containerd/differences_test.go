package containerd

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// Where containerd 1.6 and 2.4 differ, each runtime's test asserts what it
// does (runtimeSpec.serves). Both refuse v5.channel.k8s.io and the SPDY
// tunnel alike (probe_test.go); these are the CRI calls 2.4 added.

// unimplementedRE matches a client's report of a gRPC Unimplemented status.
var unimplementedRE = regexp.MustCompile(`(?i)unimplemented|unknown method`)

// crictl events: containerd 2.4 streams container events (a container
// created during the stream shows up in it); 1.6 answers Unimplemented;
// CRI-O (enable_pod_events false, its default) ends the stream at once,
// and crictl logs that it closed and exits 0.
func TestCrictlEvents(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		switch h.spec.serves.events {
		case eventsUnimplemented:
			r := h.crictl(t, "events")
			if r.ExitCode == 0 || !unimplementedRE.MatchString(r.Stderr) {
				t.Fatalf("crictl events on %s: want an Unimplemented failure; got %v", h.Name, r)
			}
			return
		case eventsClosed:
			r := h.crictl(t, "events")
			if r.ExitCode != 0 || !strings.Contains(r.Stderr, "stream is closed") {
				t.Fatalf("crictl events on %s: want exit 0 and the stream's end logged; got %v", h.Name, r)
			}
			return
		}
		ev := startBackground(t, h.crictlCmd(t, t.Context(), "events", "-o", "json"))
		// The stream is open once crictl has sent the request; a container
		// created before then is not reported. Create containers until one
		// is (each is removed at the end of the test).
		deadline := time.Now().Add(30 * time.Second)
		for {
			id := h.newContainer(t, ContainerSpec{Name: "events"})
			if strings.Contains(ev.Output(), id) {
				ev.WaitFor(t, regexp.MustCompile(`CONTAINER_(CREATED|STARTED)_EVENT`), 10*time.Second)
				return
			}
			if exited, err := ev.Exited(); exited {
				t.Fatalf("crictl events on %s exited: %v\n%s", h.Name, err, ev.Output())
			}
			if time.Now().After(deadline) {
				t.Fatalf("crictl events on %s: no event for the containers created; output:\n%s", h.Name, ev.Output())
			}
			time.Sleep(500 * time.Millisecond)
		}
	})
}

// crictl runtime-config: containerd 2.4 reports its cgroup driver (cgroupfs
// here); 1.6 answers Unimplemented.
func TestCrictlRuntimeConfig(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		r := h.crictl(t, "runtime-config")
		if !h.spec.serves.runtimeConfig {
			if r.ExitCode == 0 || !unimplementedRE.MatchString(r.Stderr) {
				t.Fatalf("crictl runtime-config on %s: want an Unimplemented failure; got %v", h.Name, r)
			}
			return
		}
		if r.ExitCode != 0 || !strings.Contains(r.Stdout, "CGROUPFS") {
			t.Fatalf("crictl runtime-config on %s: want the cgroupfs driver; got %v", h.Name, r)
		}
		t.Logf("crictl runtime-config on %s: %s", h.Name, strings.TrimSpace(r.Stdout))
	})
}
