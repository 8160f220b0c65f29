package kubelet

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// targetPod runs a busybox pod through the API server (so the kubelet owns
// it) and returns its container's runtime ID; the pod is deleted at the
// end of t.
func (c *Cluster) targetPod(t *testing.T, name string) string {
	t.Helper()
	pod := fmt.Sprintf(`{"apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": %q, "namespace": "default"},
  "spec": {"hostNetwork": true, "dnsPolicy": "Default", "automountServiceAccountToken": false,
    "terminationGracePeriodSeconds": 0,
    "containers": [{"name": "main", "image": %q, "imagePullPolicy": "IfNotPresent", "command": ["sleep", "3600"]}]}}`,
		name, c.ImageBusybox)
	return c.runPod(t, name, pod)
}

// runPod applies the pod manifest (JSON) named name through the API
// server, waits for it to be Ready, deletes it at the end of t, and returns
// its first container's runtime ID.
func (c *Cluster) runPod(t *testing.T, name, manifest string) string {
	t.Helper()
	c.mustKubectl(t, strings.NewReader(manifest), "apply", "-f", "-")
	t.Cleanup(func() {
		if r := c.kubectl(t, nil, "delete", "pod", name, "--wait", "--timeout=1m"); r.Code != 0 {
			t.Errorf("deleting pod %s: %v", name, r)
		}
	})
	if r := c.kubectl(t, nil, "wait", "--for=condition=Ready", "pod/"+name, "--timeout=2m"); r.Code != 0 {
		c.dumpPods(t, "default", "")
		t.Fatalf("pod %s not Ready: %v", name, r)
	}
	id := c.mustKubectl(t, nil, "get", "pod", name, "-o", "jsonpath={.status.containerStatuses[0].containerID}").Stdout
	_, id, ok := strings.Cut(id, "://")
	if !ok || id == "" {
		t.Fatalf("pod %s: no container ID in its status", name)
	}
	return id
}

// crisp straight on the CRI socket and kubectl through the API server and
// the kubelet agree on a container the kubelet owns.
func TestExecAgreesWithKubectl(t *testing.T) {
	c := requireCluster(t)
	const pod = "crisp-e2e-exec"
	id := c.targetPod(t, pod)

	k := c.kubectl(t, nil, "exec", pod, "--", "sh", "-c", "exit 7")
	r := c.crisp(t, nil, "exec", id, "sh", "-c", "exit 7")
	if k.Code != 7 || r.Code != 7 {
		t.Errorf("exit 7: kubectl exec gave %d, crisp exec %d; want 7 from both\nkubectl: %v\ncrisp: %v", k.Code, r.Code, k, r)
	}

	const input = "a\nb\nc\n"
	k = c.kubectl(t, strings.NewReader(input), "exec", "-i", pod, "--", "wc", "-l")
	r = c.crisp(t, strings.NewReader(input), "exec", "-i", id, "wc", "-l")
	if k.Code != 0 || r.Code != 0 || strings.TrimSpace(k.Stdout) != "3" || strings.TrimSpace(r.Stdout) != "3" {
		t.Errorf("piped stdin into wc -l: kubectl %q (exit %d), crisp %q (exit %d); want 3 from both\nkubectl: %v\ncrisp: %v",
			k.Stdout, k.Code, r.Stdout, r.Code, k, r)
	}
}

// smoke --image on the kubelet's runtime is refused before anything is
// created, naming what works.
func TestSmokeImageRefusedOnKubeletNode(t *testing.T) {
	c := requireCluster(t)
	c.targetPod(t, "crisp-e2e-refuse") // a node always runs some pod; this one shows the kubelet
	r := c.crisp(t, nil, "smoke", "--image", c.ImageBusybox, "--port", "7777")
	if r.Code != 1 {
		t.Fatalf("smoke --image on a kubelet node: %v; want exit 1", r)
	}
	// The refusal names a few of the kubelet's pods as examples: this one,
	// or those other tests of the package left for the kubelet to collect.
	for _, want := range []string{"a kubelet manages the runtime", "default/crisp-e2e-", "--pod POD", "crisp fleet"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, r.Stderr)
		}
	}
	if strings.Contains(r.Stderr, "created pod") {
		t.Errorf("smoke created a pod before refusing:\n%s", r.Stderr)
	}
	t.Logf("refused after %v:\n%s", r.Took.Round(time.Millisecond), r.Stderr)
}

// With --kubelet-stopped said wrongly, smoke creates its scratch pod, the
// kubelet removes it, and smoke says so instead of blaming the protocols.
func TestSmokeScratchPodRemovedByKubelet(t *testing.T) {
	c := requireCluster(t)
	r := c.crisp(t, nil, "smoke", "--image", c.ImageBusybox, "--kubelet-stopped", "-o", "json")
	if r.Code != 1 {
		t.Fatalf("smoke --image --kubelet-stopped under a running kubelet: %v; want exit 1", r)
	}
	if !strings.Contains(r.Stdout, "not by smoke") || !strings.Contains(r.Stdout, "scratch pod") {
		t.Errorf("the report does not say the scratch pod was removed by someone else:\n%v", r)
	}
	t.Logf("ended after %v:\n%s", r.Took.Round(time.Millisecond), r.Stderr)
}
