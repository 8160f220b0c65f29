package kubelet

import (
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/crisp-cri/crisp/deploy"
)

// The manifests run as shipped but for the one line they say to change for
// a runtime whose socket is elsewhere: the hostPath (here the kubelet's
// containerd under /tmp). The images are the manifests' own names, which
// scripts/k8s/up.sh imported on the node.

func TestDaemonSetAsShipped(t *testing.T) {
	c := requireCluster(t)
	ds, err := deploy.DaemonSet()
	if err != nil {
		t.Fatal(err)
	}
	setSocket(t, &ds.Spec.Template.Spec, c.HostSocketPath)
	waitPortFree(t, shippedPort)
	start := time.Now()
	c.apply(t, ds, "daemonset/crisp-smoke")
	besideChecked := c.fleetBesideDaemonSet(t)
	r := c.kubectl(t, nil, "-n", "kube-system", "rollout", "status", "daemonset/crisp-smoke", "--timeout=3m")
	if r.Code != 0 {
		c.dumpPods(t, "kube-system", "app=crisp-smoke")
		t.Fatalf("the DaemonSet did not roll out: %v", r)
	}
	t.Logf("DaemonSet rolled out in %v", time.Since(start).Round(100*time.Millisecond))
	c.collect(t, "app=crisp-smoke")
	besideChecked()
}

func TestJobAsShipped(t *testing.T) {
	c := requireCluster(t)
	job, err := deploy.Job()
	if err != nil {
		t.Fatal(err)
	}
	setSocket(t, &job.Spec.Template.Spec, c.HostSocketPath)
	waitPortFree(t, shippedPort)
	start := time.Now()
	c.apply(t, job, "job/crisp-smoke")
	deadline := time.Now().Add(3 * time.Minute)
	for {
		r := c.mustKubectl(t, nil, "-n", "kube-system", "get", "job", "crisp-smoke", "-o", "jsonpath={.status.succeeded}/{.status.failed}")
		if r.Stdout == fmt.Sprintf("%d/", *job.Spec.Completions) {
			break
		}
		if _, failed, _ := strings.Cut(r.Stdout, "/"); failed != "" && failed != "0" || time.Now().After(deadline) {
			c.dumpPods(t, "kube-system", "app=crisp-smoke-job")
			t.Fatalf("the Job did not complete (succeeded/failed %q)", r.Stdout)
		}
		time.Sleep(time.Second) // polling the Job's status: kubectl wait cannot wait for either of two conditions
	}
	t.Logf("Job completed in %v", time.Since(start).Round(100*time.Millisecond))
	c.collect(t, "app=crisp-smoke-job")
}

// shippedPort is the host port the manifests' echo server listens on.
const shippedPort = 7777

// waitPortFree waits until nothing listens on the host's port (the pod of
// the test before may still be going away), for a minute at most.
func waitPortFree(t *testing.T, port int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err != nil {
			return
		}
		_ = conn.Close() // only whether something answered mattered
		if time.Now().After(deadline) {
			t.Fatalf("something still listens on port %d of this host; the manifests' echo server needs it", port)
		}
		time.Sleep(500 * time.Millisecond) // waiting for another process to let go of the port
	}
}

// setSocket points the manifest's runtime-socket hostPath at path.
func setSocket(t *testing.T, pod *corev1.PodSpec, path string) {
	t.Helper()
	for i := range pod.Volumes {
		if v := &pod.Volumes[i]; v.HostPath != nil && v.HostPath.Path == "/run/containerd/containerd.sock" {
			v.HostPath.Path = path
			return
		}
	}
	t.Fatal("the manifest has no hostPath /run/containerd/containerd.sock")
}

// apply applies obj and deletes it at the end of t, waiting until its pods
// are gone (the next test's pods use the same host port).
func (c *Cluster) apply(t *testing.T, obj any, name string) {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	c.mustKubectl(t, strings.NewReader(string(b)), "apply", "-f", "-")
	t.Cleanup(func() {
		if r := c.kubectl(t, nil, "-n", "kube-system", "delete", name, "--cascade=foreground", "--wait", "--timeout=2m"); r.Code != 0 {
			t.Errorf("deleting %s: %v", name, r)
		}
	})
}

// collect reads the smoke containers' logs into crisp report, as the
// manifests' comments say, and wants one passing node.
func (c *Cluster) collect(t *testing.T, selector string) {
	t.Helper()
	pipe := fmt.Sprintf("set -o pipefail; %q --kubeconfig %q -n kube-system logs -l %s -c smoke --tail=-1 | %q report -",
		c.Kubectl, c.Kubeconfig, selector, c.CrispBin)
	r := runCmd(t, nil, "bash", "-c", pipe)
	if r.Code != 0 {
		c.dumpPods(t, "kube-system", selector)
		t.Fatalf("kubectl logs | crisp report -: %v", r)
	}
	if !strings.Contains(r.Stdout, c.NodeName) {
		t.Errorf("crisp report does not name node %s:\n%s", c.NodeName, r.Stdout)
	}
	t.Logf("crisp report:\n%s", r.Stdout)
	j := runCmd(t, nil, "bash", "-c", pipe+" -o json")
	t.Logf("report JSON: %d bytes", len(j.Stdout))
}

// dumpPods logs what the pods matching selector did, for a failed test.
func (c *Cluster) dumpPods(t *testing.T, namespace, selector string) {
	t.Helper()
	t.Logf("pods:\n%s", c.kubectl(t, nil, "-n", namespace, "get", "pods", "-l", selector, "-o", "wide").Stdout)
	t.Logf("describe:\n%s", c.kubectl(t, nil, "-n", namespace, "describe", "pods", "-l", selector).Stdout)
	for _, ctr := range []string{"smoke", "target"} {
		t.Logf("logs -c %s:\n%s", ctr, c.kubectl(t, nil, "-n", namespace, "logs", "-l", selector, "-c", ctr, "--tail=50").Stdout)
	}
	if out, err := exec.Command("tail", "-n", "40", c.KubeletLog).CombinedOutput(); err == nil {
		t.Logf("kubelet log tail:\n%s", out)
	}
}
