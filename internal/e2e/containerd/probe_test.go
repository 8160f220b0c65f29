package containerd

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// What containerd's streaming server speaks (1.6 and 2.4 alike): exec and
// attach over SPDY v1-v4 and WebSocket channel, base64.channel, v4.channel,
// v4.base64.channel, never v5; port-forward over SPDY portforward.k8s.io and
// WebSocket v4.channel.k8s.io, not the SPDY-in-WebSocket tunnel.
var containerdSpeaks = []struct {
	call, transport, protocol string
	accepted                  bool
}{
	{"exec", "spdy", "channel.k8s.io", true},
	{"exec", "spdy", "v2.channel.k8s.io", true},
	{"exec", "spdy", "v3.channel.k8s.io", true},
	{"exec", "spdy", "v4.channel.k8s.io", true},
	{"exec", "spdy", "v5.channel.k8s.io", false},
	{"exec", "websocket", "channel.k8s.io", true},
	{"exec", "websocket", "base64.channel.k8s.io", true},
	{"exec", "websocket", "v4.channel.k8s.io", true},
	{"exec", "websocket", "v4.base64.channel.k8s.io", true},
	{"exec", "websocket", "v5.channel.k8s.io", false},
	{"attach", "spdy", "channel.k8s.io", true},
	{"attach", "spdy", "v2.channel.k8s.io", true},
	{"attach", "spdy", "v3.channel.k8s.io", true},
	{"attach", "spdy", "v4.channel.k8s.io", true},
	{"attach", "spdy", "v5.channel.k8s.io", false},
	{"attach", "websocket", "channel.k8s.io", true},
	{"attach", "websocket", "base64.channel.k8s.io", true},
	{"attach", "websocket", "v4.channel.k8s.io", true},
	{"attach", "websocket", "v4.base64.channel.k8s.io", true},
	{"attach", "websocket", "v5.channel.k8s.io", false},
	{"port-forward", "spdy", "portforward.k8s.io", true},
	{"port-forward", "websocket", "SPDY/3.1+portforward.k8s.io", false},
	{"port-forward", "websocket", "v4.channel.k8s.io", true},
}

// crisp probe reports exactly what containerd speaks, and the functional
// checks pass on the protocols auto picks.
func TestCrispProbe(t *testing.T) {
	eachRuntime(t, testCrispProbe)
}

func testCrispProbe(t *testing.T, h *Harness) {
	id := h.echoContainer(t, 7778)
	r := h.crisp(t, "probe", "-o", "json", id, "--port", "7778")
	if r.ExitCode != 0 {
		t.Fatalf("crisp probe: %v", r)
	}
	var report struct {
		Results []struct {
			Call, Transport, Protocol string
			Accepted                  bool
			Status                    int
			Negotiated                string
			Checks                    []struct{ Name, Outcome, Detail string }
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil {
		t.Fatalf("crisp probe -o json: %v\n%s", err, r.Stdout)
	}
	type key struct{ call, transport, protocol string }
	got := map[key]int{}
	for i, res := range report.Results {
		got[key{res.Call, res.Transport, res.Protocol}] = i
	}
	for _, want := range containerdSpeaks {
		i, ok := got[key{want.call, want.transport, want.protocol}]
		if !ok {
			t.Errorf("crisp probe did not try %s over %s %s", want.call, want.transport, want.protocol)
			continue
		}
		res := report.Results[i]
		if res.Accepted != want.accepted {
			t.Errorf("crisp probe: %s over %s %s accepted=%v (status %d), %s gives accepted=%v",
				want.call, want.transport, want.protocol, res.Accepted, res.Status, h.Name, want.accepted)
		}
		if !want.accepted && res.Status != 403 {
			t.Errorf("crisp probe: %s over %s %s refused with status %d, containerd answers 403", want.call, want.transport, want.protocol, res.Status)
		}
		if want.accepted && res.Negotiated != want.protocol {
			t.Errorf("crisp probe: %s over %s %s negotiated %q", want.call, want.transport, want.protocol, res.Negotiated)
		}
	}
	// The protocols auto picks on containerd carry every check.
	for _, k := range []key{{"exec", "spdy", "v4.channel.k8s.io"}, {"port-forward", "spdy", "portforward.k8s.io"}} {
		i, ok := got[k]
		if !ok {
			continue // reported above
		}
		for _, c := range report.Results[i].Checks {
			if c.Outcome == "fail" && h.spec.serves.ttyRaces && testkit.IsRuntimeTTYRace(c.Detail) {
				t.Logf("crisp probe: %s over %s %s: check %s: %s's known TTY race: %s", k.call, k.transport, k.protocol, c.Name, h.Name, c.Detail)
				continue
			}
			if c.Outcome == "fail" {
				t.Errorf("crisp probe: %s over %s %s: check %s %s: %s", k.call, k.transport, k.protocol, c.Name, c.Outcome, c.Detail)
			}
		}
	}
}

// echoContainer starts a container in the bridged pod that prints all the
// time (so attach checks have output to see) and serves a TCP echo on port
// (busybox nc) for the port-forward checks. An echo server, not the pod's
// httpd: an HTTP server fed 64 KiB of noise answers and closes with input
// unread, and the reset that follows can race its answer away.
func (h *Harness) echoContainer(t *testing.T, port int) string {
	t.Helper()
	return h.newContainer(t, ContainerSpec{Name: "echo", Command: []string{"sh", "-c",
		fmt.Sprintf("nc -ll -p %d -e cat & while :; do echo tick; sleep 0.5; done", port)}})
}

// crisp smoke passes against containerd: no failure on any transport auto
// picks (defects elsewhere are warnings).
func TestCrispSmoke(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		id := h.echoContainer(t, 7777)
		r := h.crisp(t, "smoke", id, "--pod", h.Pod, "--port", "7777")
		if r.ExitCode != 0 && h.spec.serves.ttyRaces && onlyTTYRaces(r.Stdout) {
			t.Logf("crisp smoke on %s failed on its known TTY race only:\n%s", h.Name, r.Stdout)
			return
		}
		if r.ExitCode != 0 || !strings.Contains(r.Stdout+r.Stderr, " 0 failed") {
			t.Fatalf("crisp smoke against %s: %v", h.Name, r)
		}
		t.Logf("crisp smoke: %s", lastLine(r.Stdout))
	})
}

// onlyTTYRaces reports whether every FAIL line of smoke's output is a TTY race.
func onlyTTYRaces(out string) bool {
	failed := false
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "FAIL") {
			if !testkit.IsRuntimeTTYRace(l) {
				return false
			}
			failed = true
		}
	}
	return failed
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
