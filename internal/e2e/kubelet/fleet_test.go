package kubelet

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
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
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %s did not end within %s\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), bound, out.String(), errOut.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return code, out.String(), errOut.String()
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

// fleetArgs is a fleet smoke of the node; its target listens on a free host
// port (host network), so no other test's pod stands in its way.
func (c *Cluster) fleetArgs(t *testing.T, ns, socket, timeout string, extra ...string) []string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := lis.Addr().(*net.TCPAddr).Port
	_ = lis.Close() // only its number was wanted
	return append([]string{"fleet", "smoke", "--kubeconfig", c.Kubeconfig, "-n", ns, "--nodes", c.NodeName,
		"--image", c.ImageCrisp, "--target-image", c.ImageBusybox, "--runtime-socket", socket, "--timeout", timeout,
		"--port", strconv.Itoa(port)}, extra...)
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
