package kubelet

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// signalExitBound is how long crisp fleet may take from the signal to its
// exit: the pods' deletion is bounded at 30 s (client.CleanupTimeout), and
// on this cluster it takes a second or two.
const signalExitBound = 45 * time.Second

// `crisp fleet smoke` across both nodes, signalled once its pods exist:
// it exits with the status `crisp fleet --help` documents (130 for
// Ctrl-C, 143 for SIGTERM), says so, and deletes its pods on the way out.
// The two signals run side by side (fleet picks each run's ports), so the
// test takes one run's time: the pods' creation and their deletion.
func TestFleetSignalled(t *testing.T) {
	c := requireTwoNodes(t)
	for _, tc := range []struct {
		sig  syscall.Signal
		want int
	}{{syscall.SIGTERM, 143}, {syscall.SIGINT, 130}} {
		name := unix.SignalName(tc.sig)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ns := fleetNamespace(t, c)
			cmd := exec.Command(c.CrispBin, c.fleetArgs("smoke", ns, "3m")...)
			cmd.Env = cleanEnv()
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			ended := false
			t.Cleanup(func() {
				if !ended {
					_ = cmd.Process.Kill() // a failed test's crisp; the namespace's deletion takes its pods
					t.Logf("crisp fleet killed: %v", <-exited)
				}
			})

			// Once fleet has created a pod on each node.
			nodes := len(c.runtimes())
			deadline := time.Now().Add(90 * time.Second)
			for {
				r := c.kubectl(t, nil, "-n", ns, "get", "pods", "-l", "app.kubernetes.io/managed-by=crisp-fleet", "-o", "name")
				if strings.Count(r.Stdout, "pod/") == nodes {
					break
				}
				select {
				case err := <-exited:
					ended = true
					t.Fatalf("crisp fleet ended (%v) before its %d pods existed\nstdout:\n%s\nstderr:\n%s", err, nodes, out.String(), errOut.String())
				default:
				}
				if time.Now().After(deadline) {
					t.Fatalf("crisp fleet's %d pods did not exist within 90s: %v\nstderr so far:\n%s", nodes, r, errOut.String())
				}
				time.Sleep(300 * time.Millisecond) // polling the API server
			}

			sent := time.Now()
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			var err error
			select {
			case err = <-exited:
				ended = true
			case <-time.After(signalExitBound):
				t.Fatalf("crisp fleet had not exited %v after %s\nstderr:\n%s", signalExitBound, name, errOut.String())
			}
			took := time.Since(sent)
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: exit %d %v after the signal", name, code, took.Round(10*time.Millisecond))
			if code != tc.want {
				t.Errorf("exit %d after %s, want %d\nstdout:\n%s\nstderr:\n%s", code, name, tc.want, out.String(), errOut.String())
			}
			if !strings.Contains(errOut.String(), "interrupted by "+name) {
				t.Errorf("stderr does not say it was interrupted by %s:\n%s", name, errOut.String())
			}
			// Deleted by crisp, not only gone later: a pod still there
			// carries its deletion time.
			r := c.kubectl(t, nil, "-n", ns, "get", "pods", "-l", "app.kubernetes.io/managed-by=crisp-fleet",
				"-o", `jsonpath={range .items[*]}{.metadata.name} {.metadata.deletionTimestamp}{"\n"}{end}`)
			for l := range strings.SplitSeq(strings.TrimSpace(r.Stdout), "\n") {
				if f := strings.Fields(l); len(f) == 1 {
					t.Errorf("pod %s was not deleted when crisp fleet exited", f[0])
				}
			}
			c.noFleetPodsLeft(t, ns)
		})
	}
}
