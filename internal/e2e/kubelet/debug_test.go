package kubelet

import (
	"strings"
	"testing"
)

// crisp debug on a container the kubelet owns: the host way lists the
// target's processes and is what auto takes; the container way warns (the
// kubelet kills a container it did not create: seen about 2 s after its
// start, exit 137; logged for docs/debug.md, not asserted) and leaves
// nothing behind either.
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

	if !strings.Contains(r.Stderr, "warning: a kubelet owns the target's pod") {
		t.Errorf("--way container on a kubelet pod does not warn: %v", r)
	}

	// auto takes the host way on a kubelet's pod.
	r = c.crisp(t, nil, "debug", "-v", id, "--", "ps", "-o", "pid,args")
	t.Logf("auto:\n%v", r)
	if r.Code != 0 || !strings.Contains(r.Stdout, "sleep 3600") || !strings.Contains(r.Stderr, "way: host") {
		t.Errorf("crisp debug (auto) -- ps on a kubelet pod: %v", r)
	}
	if left := c.crisp(t, nil, "ps", "-a", "-q", "--label", "io.crisp.debug=1"); left.Code != 0 || strings.TrimSpace(left.Stdout) != "" {
		t.Errorf("debug containers left behind: %v", left)
	}
}
