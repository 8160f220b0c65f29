package kubelet

import (
	"strings"
	"testing"
)

// crisp debug on a container the kubelet owns: the host way lists the
// target's processes; what the container way meets there (a debug
// container added to a kubelet's pod, without the kubelet's labels) is
// logged for docs/debug.md and must leave nothing behind either way.
func TestDebugOnKubeletPod(t *testing.T) {
	c := requireCluster(t)
	id := c.targetPod(t, "crisp-e2e-debug")

	r := c.crisp(t, nil, "debug", "-v", "--way", "host", id, "--", "ps", "-o", "pid,args")
	if r.Code != 0 || !strings.Contains(r.Stdout, "sleep 3600") || !strings.Contains(r.Stderr, "way: host") {
		t.Fatalf("crisp debug --way host -- ps on a kubelet pod: %v", r)
	}
	t.Logf("host way:\n%v", r)

	// Long enough for the kubelet's sync loop to see the added container.
	r = c.crisp(t, nil, "debug", "-v", "--way", "container", id, "--", "sh", "-c", "ps -o pid,args; sleep 15; echo still here")
	t.Logf("container way, a 15 s session:\n%v", r)

	r = c.crisp(t, nil, "debug", "-v", id, "--", "ps", "-o", "pid,args")
	t.Logf("auto:\n%v", r)
	if r.Code != 0 || !strings.Contains(r.Stdout, "sleep 3600") {
		t.Errorf("crisp debug (auto) -- ps on a kubelet pod: %v", r)
	}
	if left := c.crisp(t, nil, "ps", "-a", "-q", "--label", "io.crisp.debug=1"); left.Code != 0 || strings.TrimSpace(left.Stdout) != "" {
		t.Errorf("debug containers left behind: %v", left)
	}
}
