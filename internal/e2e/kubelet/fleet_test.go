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
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
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

// fleetArgs is a fleet smoke of the node; its target listens on the port
// the run picks (host network: no other test's pod stands in its way).
func (c *Cluster) fleetArgs(t *testing.T, ns, socket, timeout string, extra ...string) []string {
	t.Helper()
	return append([]string{"fleet", "smoke", "--kubeconfig", c.Kubeconfig, "-n", ns, "--nodes", c.NodeName,
		"--image", c.ImageCrisp, "--target-image", c.ImageBusybox, "--runtime-socket", socket, "--timeout", timeout}, extra...)
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

// `crisp fleet smoke` on the node: exit 0, one ok node, JSON that says so,
// and nothing left behind.
func TestFleetSmoke(t *testing.T) {
	c := requireCluster(t)
	ns := fleetNamespace(t, c)
	code, out, errOut := fleetRun(t, 5*time.Minute, c.CrispBin, c.fleetArgs(t, ns, c.HostSocketPath, "3m", "-o", "json")...)
	if code != 0 {
		t.Fatalf("crisp fleet smoke exited %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var fl struct {
		Runs []struct {
			Node   string `json:"node"`
			Kind   string `json:"kind"`
			Checks []struct {
				Outcome string `json:"outcome"`
			} `json:"checks"`
		} `json:"runs"`
		Problems []any `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &fl); err != nil {
		t.Fatalf("stdout is no fleet JSON: %v\n%s", err, out)
	}
	if len(fl.Runs) != 1 || fl.Runs[0].Node != c.NodeName || fl.Runs[0].Kind != "smoke" || len(fl.Problems) != 0 || len(fl.Runs[0].Checks) < 10 {
		t.Fatalf("want one smoke run of %s with its checks: %s", c.NodeName, out)
	}
	for _, ch := range fl.Runs[0].Checks {
		if ch.Outcome == "fail" {
			t.Errorf("a failed check in a passing run: %s", out)
		}
	}
	if !strings.Contains(errOut, c.NodeName+": ok after") {
		t.Errorf("no progress line for the node:\n%s", errOut)
	}
	c.noFleetPodsLeft(t, ns)
}

// A wrong runtime socket: the pod never starts; the run ends at its
// timeout with exit 1, the node failed and the reason named.
func TestFleetSmokeWrongSocket(t *testing.T) {
	c := requireCluster(t)
	ns := fleetNamespace(t, c)
	code, out, errOut := fleetRun(t, 3*time.Minute, c.CrispBin, c.fleetArgs(t, ns, "/run/crisp-fleet-e2e-nothing.sock", "40s")...)
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	want := "FAIL smoke " + c.NodeName + " smoke/report: did not finish within --timeout 40s"
	if !strings.Contains(out, want) || !strings.Contains(out, "crisp-fleet-e2e-nothing.sock") {
		t.Errorf("stdout lacks %q and the socket's path in the reason:\n%s", want, out)
	}
	c.noFleetPodsLeft(t, ns)
}

// fleetBesideDaemonSet runs `crisp fleet smoke` while the DaemonSet's pod
// (applied just before) comes up on the same node, and returns what checks
// the outcome. Both pods are on the node's network, where the DaemonSet's
// echo server holds 7777: a fleet run there once failed 2 of 4 times with
// "sent 64 KiB to port 7777, 0 bytes came back: EOF", its own echo server
// having failed to listen unseen and its checks reaching the DaemonSet's.
// Now a run picks its own port and passes beside it; told --port 7777, it
// fails the node at once saying the port is taken.
func (c *Cluster) fleetBesideDaemonSet(t *testing.T) (check func()) {
	t.Helper()
	type outcome struct {
		r   result
		err error
	}
	picked, given := make(chan outcome, 1), make(chan outcome, 1)
	nsPicked, nsGiven := fleetNamespace(t, c), fleetNamespace(t, c)
	argsPicked := c.fleetArgs(t, nsPicked, c.HostSocketPath, "3m")
	argsGiven := c.fleetArgs(t, nsGiven, c.HostSocketPath, "2m", "--port", strconv.Itoa(shippedPort))
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
		if p.err != nil || p.r.Code != 0 || !strings.Contains(p.r.Stderr, c.NodeName+": ok after") {
			t.Errorf("fleet smoke beside the DaemonSet, its port picked: %v %v", p.err, p.r)
		}
		want := "the target could not listen on port 7777: another process of the node holds it"
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

// listening says whether something accepts on the host's port.
func listening(port int) bool {
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	if err == nil {
		_ = conn.Close() // only whether something answered mattered
	}
	return err == nil
}
