package kubelet

import (
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"strconv"
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

// variant is one runtime's copy of a manifest. A cluster that runs two
// runtimes applies one copy per runtime, pinned by a nodeSelector, each
// with its runtime's socket (the line the manifests say to change for
// CRI-O). Here both nodes share one machine's network, so the CRI-O copy
// also moves its echo port (the line they say to change when 7777 is
// taken).
type variant struct {
	suffix, runtime, socket string
	port                    int
}

func (c *Cluster) variants() []variant {
	v := []variant{{"", "containerd", c.HostSocketPath, shippedPort}}
	if c.CRIO != nil {
		v = append(v, variant{"-crio", "crio", c.CRIO.HostSocketPath, shippedPort + 1})
	}
	return v
}

// relabel moves the app label (in the object's labels, its selector's,
// its pods') to the variant's, so that the copies' selectors do not overlap.
func (v variant) relabel(labels ...map[string]string) {
	for _, l := range labels {
		if l != nil && l["app"] != "" {
			l["app"] += v.suffix
		}
	}
}

func (v variant) pod(t *testing.T, spec *corev1.PodSpec) {
	t.Helper()
	setSocket(t, spec, v.socket)
	spec.NodeSelector = map[string]string{"crisp.dev/runtime": v.runtime}
	if v.port == shippedPort {
		return
	}
	from, to := strconv.Itoa(shippedPort), strconv.Itoa(v.port)
	for i := range spec.InitContainers {
		ctr := &spec.InitContainers[i]
		for j := range ctr.Command {
			ctr.Command[j] = strings.ReplaceAll(ctr.Command[j], "-p "+from+" ", "-p "+to+" ")
		}
		for j := range ctr.Args {
			if ctr.Args[j] == from && j > 0 && ctr.Args[j-1] == "--port" {
				ctr.Args[j] = to
			}
		}
	}
}

func TestDaemonSetAsShipped(t *testing.T) {
	c := requireCluster(t)
	start := time.Now()
	var names, apps []string
	for _, v := range c.variants() {
		ds, err := deploy.DaemonSet()
		if err != nil {
			t.Fatal(err)
		}
		ds.Name += v.suffix
		v.relabel(ds.Labels, ds.Spec.Selector.MatchLabels, ds.Spec.Template.Labels)
		v.pod(t, &ds.Spec.Template.Spec)
		waitPortFree(t, v.port)
		c.apply(t, ds, "daemonset/"+ds.Name)
		names, apps = append(names, ds.Name), append(apps, "crisp-smoke"+v.suffix)
	}
	besideChecked := c.fleetBesideDaemonSet(t)
	for _, name := range names {
		if r := c.kubectl(t, nil, "-n", "kube-system", "rollout", "status", "daemonset/"+name, "--timeout=3m"); r.Code != 0 {
			c.dumpPods(t, "kube-system", "app in ("+strings.Join(apps, ",")+")")
			t.Fatalf("the DaemonSet %s did not roll out: %v", name, r)
		}
	}
	t.Logf("DaemonSets %s rolled out in %v", strings.Join(names, ", "), time.Since(start).Round(100*time.Millisecond))
	c.collect(t, "app in ("+strings.Join(apps, ",")+")")
	besideChecked()
}

func TestJobAsShipped(t *testing.T) {
	c := requireCluster(t)
	start := time.Now()
	var jobs []string
	for _, v := range c.variants() {
		job, err := deploy.Job()
		if err != nil {
			t.Fatal(err)
		}
		job.Name += v.suffix
		v.relabel(job.Labels, job.Spec.Template.Labels)
		for _, term := range job.Spec.Template.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			v.relabel(term.LabelSelector.MatchLabels)
		}
		v.pod(t, &job.Spec.Template.Spec)
		waitPortFree(t, v.port)
		c.apply(t, job, "job/"+job.Name)
		jobs = append(jobs, job.Name)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for _, name := range jobs {
		for {
			r := c.mustKubectl(t, nil, "-n", "kube-system", "get", "job", name, "-o", "jsonpath={.status.succeeded}/{.status.failed}")
			if r.Stdout == "1/" {
				break
			}
			_, failed, _ := strings.Cut(r.Stdout, "/")
			if failed != "" && failed != "0" {
				if j := c.report(t, "job-name="+name, "-o", "json"); c.failedOnTTYRacesOnly(j.Code, j.Stdout) {
					t.Logf("the Job %s failed on CRI-O's known TTY race only", name)
					break
				}
			}
			if failed != "" && failed != "0" || time.Now().After(deadline) {
				c.dumpPods(t, "kube-system", "job-name="+name)
				t.Fatalf("the Job %s did not complete (succeeded/failed %q)", name, r.Stdout)
			}
			time.Sleep(time.Second) // polling the Job's status: kubectl wait cannot wait for either of two conditions
		}
	}
	t.Logf("Jobs %s completed in %v", strings.Join(jobs, ", "), time.Since(start).Round(100*time.Millisecond))
	var apps []string
	for _, v := range c.variants() {
		apps = append(apps, "crisp-smoke-job"+v.suffix)
	}
	c.collect(t, "app in ("+strings.Join(apps, ",")+")")
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
// manifests' comments say, and wants every node to pass.
func (c *Cluster) collect(t *testing.T, selector string) {
	t.Helper()
	r, j := c.report(t, selector), c.report(t, selector, "-o", "json")
	if r.Code != 0 && !c.failedOnTTYRacesOnly(j.Code, j.Stdout) {
		c.dumpPods(t, "kube-system", selector)
		t.Fatalf("kubectl logs | crisp report -: %v", r)
	}
	for node := range c.runtimes() {
		if !strings.Contains(r.Stdout, node) {
			t.Errorf("crisp report does not name node %s:\n%s", node, r.Stdout)
		}
	}
	t.Logf("crisp report:\n%s", r.Stdout)
	t.Logf("report JSON: %d bytes", len(j.Stdout))
}

// report runs `crisp report -` (with args) on the smoke logs of the pods
// selector matches, as a user of the manifests does.
func (c *Cluster) report(t *testing.T, selector string, args ...string) result {
	t.Helper()
	pipe := fmt.Sprintf("set -o pipefail; %q --kubeconfig %q -n kube-system logs -l %q -c smoke --tail=-1 | %q report - %s",
		c.Kubectl, c.Kubeconfig, selector, c.CrispBin, strings.Join(args, " "))
	return runCmd(t, nil, "bash", "-c", pipe)
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
