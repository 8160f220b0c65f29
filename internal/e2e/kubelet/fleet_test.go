package kubelet

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// fleetRun runs a command with a hard bound (a hang fails, it does not
// block the suite) and returns its exit status and output.
func fleetRun(t *testing.T, bound time.Duration, name string, args ...string) (int, string, string) {
	t.Helper()
	r, err := runBounded(bound, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return r.Code, r.Stdout, r.Stderr
}

// runBounded is fleetRun for a goroutine: the error says what went wrong.
func runBounded(bound time.Duration, name string, args ...string) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = cleanEnv()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	r := result{Stdout: out.String(), Stderr: errOut.String(), Took: time.Since(start)}
	if ctx.Err() != nil {
		return r, fmt.Errorf("%s %s did not end within %s: %v", name, strings.Join(args, " "), bound, r)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.Code = ee.ExitCode()
	} else if err != nil {
		return r, fmt.Errorf("%s: %w", name, err)
	}
	return r, nil
}

// fleetNamespace makes a namespace of the test's own, deleted at the end.
func fleetNamespace(t *testing.T, c *Cluster) string {
	t.Helper()
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	ns := "crisp-fleet-" + hex.EncodeToString(b)
	if code, out, errOut := fleetRun(t, time.Minute, c.Kubectl, "--kubeconfig", c.Kubeconfig, "create", "namespace", ns); code != 0 {
		t.Fatalf("kubectl create namespace: %d %s %s", code, out, errOut)
	}
	t.Cleanup(func() {
		_, _, _ = fleetRun(t, 2*time.Minute, c.Kubectl, "--kubeconfig", c.Kubeconfig, "delete", "namespace", ns, "--wait=false")
	})
	return ns
}

// fleetArgs is a crisp fleet MODE (smoke or probe) in namespace ns; each
// node's target listens on the port the run picks and each node's socket is
// found from kubeadm's annotation, which scripts/k8s/up.sh sets. extra picks
// the nodes (default: all) and the rest.
func (c *Cluster) fleetArgs(mode, ns, timeout string, extra ...string) []string {
	return append([]string{"fleet", mode, "--kubeconfig", c.Kubeconfig, "-n", ns,
		"--image", c.ImageCrisp, "--target-image", c.ImageBusybox, "--timeout", timeout}, extra...)
}

// noFleetPodsLeft: the run deleted what it created.
func (c *Cluster) noFleetPodsLeft(t *testing.T, ns string) {
	t.Helper()
	code, out, errOut := fleetRun(t, 2*time.Minute, c.Kubectl, "--kubeconfig", c.Kubeconfig, "-n", ns, "wait", "--for=delete", "pod",
		"-l", "app.kubernetes.io/managed-by=crisp-fleet", "--timeout=90s")
	if code != 0 && !strings.Contains(errOut, "no matching resources") {
		t.Errorf("crisp fleet's pods are still there: %s %s", out, errOut)
	}
}

// fleetJSON is crisp fleet's -o json, as far as the tests read it.
type fleetJSON struct {
	Runs []struct {
		Node   string `json:"node"`
		Kind   string `json:"kind"`
		Source string `json:"source"`
		Checks []struct {
			Check   string `json:"check"`
			Outcome string `json:"outcome"`
			Detail  string `json:"detail"`
		} `json:"checks"`
	} `json:"runs"`
	Problems []any `json:"problems"`
}

// runtimes are the nodes' runtimes as their reports name them.
func (c *Cluster) runtimes() map[string]string {
	rt := map[string]string{c.NodeName: "containerd://"}
	if c.CRIO != nil {
		rt[c.CRIO.Name] = "cri-o://" + c.CRIO.Version
	}
	return rt
}

// checkFleetPassed wants a run of kind on every node, each passing, each
// read from a pod on its own runtime (the report's source names it), with
// at least min checks.
func (c *Cluster) checkFleetPassed(t *testing.T, kind, out string, minChecks int) {
	t.Helper()
	var fl fleetJSON
	if err := json.Unmarshal([]byte(out), &fl); err != nil {
		t.Fatalf("stdout is no fleet JSON: %v\n%s", err, out)
	}
	rts := c.runtimes()
	if len(fl.Runs) != len(rts) || len(fl.Problems) != 0 {
		t.Fatalf("want one %s run per node (%d) and no problems: %s", kind, len(rts), out)
	}
	for _, r := range fl.Runs {
		if r.Kind != kind || !strings.Contains(r.Source, ", "+rts[r.Node]) || len(r.Checks) < minChecks {
			t.Errorf("node %s: kind %s, source %q (want its runtime %s), %d checks", r.Node, r.Kind, r.Source, rts[r.Node], len(r.Checks))
		}
		for _, ch := range r.Checks {
			switch {
			case ch.Outcome == "fail" && c.ttyRace(r.Node, ch.Detail):
				t.Logf("node %s: %s failed on CRI-O's known TTY race: %s", r.Node, ch.Check, ch.Detail)
			case ch.Outcome == "fail":
				t.Errorf("node %s: %s failed in a passing run: %s", r.Node, ch.Check, ch.Detail)
			}
		}
	}
}

// ttyRace reports whether a check's failure on node is CRI-O's known TTY
// race (testkit.IsRuntimeTTYRace): the runtime's defect, crictl sees it too.
func (c *Cluster) ttyRace(node, detail string) bool {
	return c.CRIO != nil && node == c.CRIO.Name && testkit.IsRuntimeTTYRace(detail)
}

// failedOnTTYRacesOnly reports whether a fleet or report run that exited 1
// failed only on CRI-O's known TTY races: its JSON (out) has runs, no
// problems, and every failed check is such a race.
func (c *Cluster) failedOnTTYRacesOnly(code int, out string) bool {
	var fl fleetJSON
	if code != 1 || json.Unmarshal([]byte(out), &fl) != nil || len(fl.Runs) == 0 || len(fl.Problems) != 0 {
		return false
	}
	failed := false
	for _, r := range fl.Runs {
		for _, ch := range r.Checks {
			if ch.Outcome == "fail" {
				if !c.ttyRace(r.Node, ch.Detail) {
					return false
				}
				failed = true
			}
		}
	}
	return failed
}

// `crisp fleet probe` on both nodes, each socket given by runtime: exit 0,
// each node's report from its own runtime, nothing left behind.
func TestFleetProbeBothRuntimes(t *testing.T) {
	c := requireTwoNodes(t)
	ns := fleetNamespace(t, c)
	sockets := "containerd=" + c.HostSocketPath + ",cri-o=" + c.CRIO.HostSocketPath
	code, out, errOut := fleetRun(t, 5*time.Minute, c.CrispBin, c.fleetArgs("probe", ns, "3m", "--runtime-socket", sockets, "-o", "json")...)
	raced := code != 0 && c.failedOnTTYRacesOnly(code, out)
	if code != 0 && !raced {
		t.Fatalf("crisp fleet probe exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	c.checkFleetPassed(t, "probe", out, 5)
	for node, rt := range c.runtimes() {
		ended := strings.Contains(errOut, node+": ok after") || raced && c.CRIO != nil && node == c.CRIO.Name && strings.Contains(errOut, node+": FAIL after")
		if !ended || !strings.Contains(errOut, node+": pod "+ns+"/crisp-probe-") || !strings.Contains(errOut, "("+rt) {
			t.Errorf("no progress lines for %s on %s:\n%s", node, rt, errOut)
		}
	}
	c.noFleetPodsLeft(t, ns)
}

// `crisp fleet doctor` on both nodes: every hop of each node's path
// passes (v5 refused by both runtimes is a note, a pass), exec and the
// port-forward round trip to the pod's own target included, each report
// from its own runtime; nothing left behind.
func TestFleetDoctorBothRuntimes(t *testing.T) {
	c := requireTwoNodes(t)
	ns := fleetNamespace(t, c)
	code, out, errOut := fleetRun(t, 5*time.Minute, c.CrispBin, c.fleetArgs("doctor", ns, "3m", "-o", "json")...)
	if code != 0 {
		t.Fatalf("crisp fleet doctor exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	c.checkFleetPassed(t, "doctor", out, 10)
	var fl fleetJSON
	if err := json.Unmarshal([]byte(out), &fl); err != nil {
		t.Fatal(err)
	}
	for _, r := range fl.Runs {
		passed := map[string]bool{}
		for _, ch := range r.Checks {
			passed[ch.Check] = ch.Outcome == "pass"
		}
		for _, hop := range []string{"node/runtime", "node/target", "node/exec-rpc", "node/tcp", "node/upgrade-spdy", "node/exec", "node/attach", "node/port-forward"} {
			if !passed[hop] {
				t.Errorf("node %s: hop %s did not pass: %+v", r.Node, hop, r.Checks)
			}
		}
	}
	c.noFleetPodsLeft(t, ns)
}

// A wrong runtime socket: the pod never starts; the run ends at its
// timeout with exit 1, the node failed and the reason named.
func TestFleetSmokeWrongSocket(t *testing.T) {
	c := requireCluster(t)
	ns := fleetNamespace(t, c)
	code, out, errOut := fleetRun(t, 3*time.Minute, c.CrispBin,
		c.fleetArgs("smoke", ns, "40s", "--nodes", c.NodeName, "--runtime-socket", "/run/crisp-fleet-e2e-nothing.sock")...)
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	want := "  1 FAIL smoke/report: did not finish within --timeout 40s"
	if !strings.Contains(out, want) || !strings.Contains(out, "crisp-fleet-e2e-nothing.sock") || !strings.Contains(out, "         "+c.NodeName+"\n") {
		t.Errorf("stdout lacks %q, the socket's path in the reason and the node:\n%s", want, out)
	}
	c.noFleetPodsLeft(t, ns)
}

// The CRI-O node's runtime stops while crisp runs there: that node fails
// with the reason (the kubelet's: container runtime is down) once it has
// been not Ready for fleet's grace, before --timeout; the containerd node
// passes. CRI-O is started again afterwards, as its node's
// pods survive it (conmon), and the node turns Ready again.
func TestFleetRuntimeStoppedDuringTheRun(t *testing.T) {
	c := requireTwoNodes(t)
	ns := fleetNamespace(t, c)
	scriptEnv := []string{"CRISP_K8S_DIR=" + c.Dir, "CRISP_K8S_CRIO_DIR=" + c.CRIO.Dir}
	type outcome struct {
		r   result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		r, err := runBounded(5*time.Minute, c.CrispBin, c.fleetArgs("smoke", ns, "2m")...)
		done <- outcome{r, err}
	}()
	// Once crisp runs on the CRI-O node.
	jsonpath := `{range .items[?(@.metadata.annotations.crisp-fleet-node=="` + c.CRIO.Name + `")]}{.status.containerStatuses[?(@.name=="crisp")].state.running.startedAt}{end}`
	deadline := time.Now().Add(90 * time.Second)
	for c.kubectl(t, nil, "-n", ns, "get", "pods", "-o", "jsonpath="+jsonpath).Stdout == "" {
		if time.Now().After(deadline) {
			t.Fatalf("crisp did not start on %s within 90s: %v", c.CRIO.Name, c.kubectl(t, nil, "-n", ns, "get", "pods", "-o", "wide"))
		}
		time.Sleep(time.Second) // polling the pod's status
	}
	if out, err := runScriptEnv(time.Minute, scriptEnv, "k8s/crio-node.sh", "stop"); err != nil {
		t.Fatalf("stopping CRI-O: %v\n%s", err, out)
	}
	stopped := true
	restart := func() {
		if stopped {
			stopped = false
			if out, err := runScriptEnv(time.Minute, scriptEnv, "k8s/crio-node.sh", "start"); err != nil {
				t.Errorf("starting CRI-O again: %v\n%s", err, out)
			}
			c.mustKubectl(t, nil, "wait", "--for=condition=Ready", "node/"+c.CRIO.Name, "--timeout=2m")
		}
	}
	t.Cleanup(restart)
	o := <-done
	restart()
	if o.err != nil {
		t.Fatal(o.err)
	}
	if o.r.Code != 1 {
		t.Fatalf("exit %d, want 1: %v", o.r.Code, o.r)
	}
	lines := strings.Split(o.r.Stdout, "\n")
	var crio, ok string
	for i, l := range lines {
		if i+2 < len(lines) && strings.TrimSpace(lines[i+2]) == c.CRIO.Name && strings.Contains(l, " FAIL ") {
			crio = l
		}
		if i+2 < len(lines) && strings.TrimSpace(lines[i+2]) == c.NodeName && strings.Contains(l, " ok ") {
			ok = l
		}
	}
	if ok == "" {
		t.Errorf("the containerd node did not pass alone in its group:\n%s", o.r.Stdout)
	}
	// It fails once not Ready for fleet's grace (45 s), not at --timeout.
	for _, want := range []string{"not Ready", "container runtime is down", "during the run"} {
		if !strings.Contains(crio, want) {
			t.Errorf("the CRI-O node's failure %q lacks %q\n%s", crio, want, o.r.Stdout)
		}
	}
	if strings.Contains(crio, "--timeout") {
		t.Errorf("the CRI-O node was waited for until --timeout: %q", crio)
	}
	c.noFleetPodsLeft(t, ns)
}

// fleetBesideDaemonSet runs `crisp fleet smoke` on every node while the
// DaemonSets (applied just before) come up, and returns what checks the
// outcome. All these pods are on the machine's network, where the
// containerd node's DaemonSet echo server holds 7777: a fleet run beside it
// once failed 2 of 4 times with "sent 64 KiB to port 7777, 0 bytes came
// back: EOF", its own echo server having failed to listen unseen and its
// checks reaching the DaemonSet's. Now a run picks its own ports and passes
// beside it, each node's report from its own runtime (the suite's fleet
// smoke across both nodes); told --port 7777, it fails the nodes at once
// saying the port is taken.
func (c *Cluster) fleetBesideDaemonSet(t *testing.T) (check func()) {
	t.Helper()
	type outcome struct {
		r   result
		err error
	}
	picked, given := make(chan outcome, 1), make(chan outcome, 1)
	nsPicked, nsGiven := fleetNamespace(t, c), fleetNamespace(t, c)
	saved := t.TempDir()
	argsPicked := c.fleetArgs("smoke", nsPicked, "3m", "-o", "json", "--save-logs", saved)
	argsGiven := c.fleetArgs("smoke", nsGiven, "2m", "--port", strconv.Itoa(shippedPort))
	go func() {
		r, err := runBounded(4*time.Minute, c.CrispBin, argsPicked...)
		picked <- outcome{r, err}
	}()
	go func() {
		// Once the DaemonSet's echo server holds 7777.
		deadline := time.Now().Add(2 * time.Minute)
		for !listening(shippedPort) {
			if time.Now().After(deadline) {
				given <- outcome{err: fmt.Errorf("the DaemonSet's echo server did not listen on %d within 2m", shippedPort)}
				return
			}
			time.Sleep(500 * time.Millisecond) // waiting for the DaemonSet's pod
		}
		r, err := runBounded(3*time.Minute, c.CrispBin, argsGiven...)
		given <- outcome{r, err}
	}()
	return func() {
		t.Helper()
		p, g := <-picked, <-given
		if p.err != nil || p.r.Code != 0 && !c.failedOnTTYRacesOnly(p.r.Code, p.r.Stdout) {
			t.Errorf("fleet smoke beside the DaemonSet, its ports picked: %v %v", p.err, p.r)
			logSaved(t, saved)
		} else {
			c.checkFleetPassed(t, "smoke", p.r.Stdout, 10)
		}
		want := fmt.Sprintf("  %d FAIL smoke/report: the target could not listen on port 7777: another process of the node holds it", len(c.runtimes()))
		if g.err != nil || g.r.Code != 1 || !strings.Contains(g.r.Stdout, want) || strings.Contains(g.r.Stdout, "came back") {
			t.Errorf("fleet smoke --port 7777 beside the DaemonSet: want exit 1 and %q\n%v %v", want, g.err, g.r)
		}
		if g.r.Took > 90*time.Second {
			t.Errorf("fleet smoke --port 7777 took %v: a taken port fails the node when its target ends, not at the timeout", g.r.Took)
		}
		c.noFleetPodsLeft(t, nsPicked)
		c.noFleetPodsLeft(t, nsGiven)
	}
}

// logSaved logs the crisp logs a run saved (--save-logs), as read, for a
// failed test.
func logSaved(t *testing.T, dir string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		t.Logf("%s (%v), %d bytes, as read:\n%q", filepath.Base(f), err, len(b), b)
	}
}

// listening says whether something accepts on the host's port.
func listening(port int) bool {
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	if err == nil {
		_ = conn.Close() // only whether something answered mattered
	}
	return err == nil
}
