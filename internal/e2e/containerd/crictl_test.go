package containerd

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The crictl v1.37.0 side of the interop matrix. Each test pins what crictl
// does against containerd 1.6 and 2.4 today, including where it fails: the known
// defects (exit codes, its WebSocket transport) are asserted as they are, so
// the matrix crisp is compared with stays true.

func TestCrictlVersion(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		r := h.crictl(t, "version")
		if r.ExitCode != 0 {
			t.Fatalf("crictl version: %v", r)
		}
		for _, want := range []string{"RuntimeName:  " + h.spec.runtimeName, "RuntimeApiVersion:  v1"} {
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("crictl version lacks %q:\n%s", want, r.Stdout)
			}
		}
	})
}

func TestCrictlExec(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		r := h.crictl(t, "exec", h.Ctr, "sh", "-c", "echo out; echo err >&2")
		if r.ExitCode != 0 || r.Stdout != "out\n" || !strings.Contains(r.Stderr, "err\n") {
			t.Fatalf("crictl exec: want stdout %q, stderr with %q, exit 0; got %v", "out\n", "err\n", r)
		}
		// The host-network pod shares the host's network and UTS namespaces.
		host, err := os.Hostname()
		if err != nil {
			t.Fatal(err)
		}
		r = h.crictl(t, "exec", h.HostnetCtr, "hostname")
		if r.ExitCode != 0 || strings.TrimSpace(r.Stdout) != host {
			t.Errorf("crictl exec hostname in the host-network pod: want %q; got %v", host, r)
		}
		r = h.crictl(t, "exec", h.Ctr, "hostname")
		if r.ExitCode != 0 || strings.TrimSpace(r.Stdout) != "crisp-bridge" {
			t.Errorf("crictl exec hostname in the bridged pod: want %q; got %v", "crisp-bridge", r)
		}
	})
}

// crictl loses the remote exit code: any non-zero code becomes 1, and only
// its error message names the real one.
func TestCrictlExecExitCodeLost(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		for _, sync := range []bool{false, true} {
			t.Run(fmt.Sprintf("sync=%v", sync), func(t *testing.T) {
				args := []string{"exec", h.Ctr, "sh", "-c", "exit 7"}
				if sync {
					args = []string{"exec", "-s", h.Ctr, "sh", "-c", "exit 7"}
				}
				r := h.crictl(t, args...)
				if r.ExitCode != 1 || !strings.Contains(r.Stderr, "7") {
					t.Fatalf("crictl %v: want exit 1 with the real code 7 in its message (crictl's known defect); got %v", args, r)
				}
				t.Logf("crictl %s: remote exit 7 -> crictl exit %d (%s)", strings.Join(args[:len(args)-3], " "), r.ExitCode, strings.TrimSpace(r.Stderr))
			})
		}
		// A command that cannot start is an error, not an exit code.
		r := h.crictl(t, "exec", h.Ctr, "no-such-command")
		if r.ExitCode != 1 || !strings.Contains(r.Stderr, "executable file not found") {
			t.Errorf("crictl exec no-such-command: want exit 1 naming the missing executable; got %v", r)
		}
	})
}

func TestCrictlExecStdinEOF(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		start := time.Now()
		r := h.crictlStdin(t, strings.NewReader("a\nb\n"), "exec", "-i", h.Ctr, "wc", "-l")
		if r.ExitCode != 0 || strings.TrimSpace(r.Stdout) != "2" {
			t.Fatalf("crictl exec -i wc -l with 2 lines on stdin: want 2; got %v", r)
		}
		t.Logf("crictl exec -i (SPDY) ended stdin: wc -l answered in %v", time.Since(start).Round(time.Millisecond))
	})
}

// 64 MiB through crictl's SPDY exec, both ways, checked by SHA-256.
func TestCrictlExecIntegrity64MiB(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		const size = 64 << 20
		// Out: `yes` in the container, a known stream.
		r := h.crictl(t, "exec", h.Ctr, "sh", "-c", fmt.Sprintf("yes crisp-integrity | head -c %d", size))
		want := bytes.Repeat([]byte("crisp-integrity\n"), size/16+1)[:size]
		if r.ExitCode != 0 || !strings.HasPrefix(string(want), r.Stdout) || len(r.Stdout) == 0 {
			t.Fatalf("crictl exec stdout: want %d bytes of `yes crisp-integrity`; got %d bytes, exit %d, err %v, stderr %q",
				size, len(r.Stdout), r.ExitCode, r.Err, r.Stderr)
		}
		if len(r.Stdout) < size {
			// Seen once on containerd 2.4 under CI load: crictl (client-go's
			// SPDY executor, which takes an error stream that closes empty
			// for success) exited 0 short of the end. That silent cut is the
			// peer's known defect, the one crisp's status watch turns into an
			// error: noted, not failed; what crictl did deliver must be intact.
			t.Logf("crictl exec exited 0 after %d of %d bytes: crictl's silent cut", len(r.Stdout), size)
		}
		// In: pseudo-random bytes on stdin, hashed in the container.
		data := pseudoRandom(size)
		sum := sha256.Sum256(data)
		r = h.crictlStdin(t, bytes.NewReader(data), "exec", "-i", h.Ctr, "sha256sum")
		if r.ExitCode != 0 || !strings.HasPrefix(r.Stdout, hex.EncodeToString(sum[:])) {
			t.Fatalf("crictl exec -i sha256sum of 64 MiB: want %x; got %v", sum, r)
		}
	})
}

var forwardingRE = regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)`)

func TestCrictlPortForward(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		port := freePort(t)
		pf := startBackground(t, h.crictlCmd(t, t.Context(), "port-forward", h.Pod, fmt.Sprintf("%d:%d", port, h.HTTPDPort)))
		m := pf.WaitFor(t, forwardingRE, 30*time.Second)
		if m[1] != strconv.Itoa(port) {
			t.Fatalf("crictl port-forward listens on %s, asked for %d", m[1], port)
		}
		for i := range 3 {
			body, err := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/", port), 10*time.Second)
			if err != nil || !strings.Contains(body, "crisp busybox httpd") {
				t.Fatalf("GET %d through crictl port-forward: %v, body %q", i, err, body)
			}
		}
		if exited, err := pf.Exited(); exited {
			t.Fatalf("crictl port-forward exited after 3 requests: %v", err)
		}
	})
}

// The harness's own check that the pod's bridge address answers: the one
// direct host -> pod connection the suite makes (critest does the same).
func TestPodAddressOnBridge(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		if h.PodIP == "" {
			t.Fatal("the harness wrote no CRISP_CTRD_POD_IP")
		}
		// This failed in CI with "no route to host" for 2.4's pod, a minute
		// long: not load, but CRI-O's start deleting the pod's interface
		// (see TestPodsKeepTheirNetworkWhenCRIOStarts).
		body, err := httpGet(t, fmt.Sprintf("http://%s:%d/", h.PodIP, h.HTTPDPort), 10*time.Second)
		if err != nil || !strings.Contains(body, "crisp busybox httpd") {
			t.Fatalf("GET the pod's httpd at %s:%d: %v, body %q", h.PodIP, h.HTTPDPort, err, body)
		}
	})
}

// crictl's --transport websocket offers only v5.channel.k8s.io for exec and
// attach and only the SPDY tunnel for port-forward; containerd (1.6 and
// 2.4) speaks neither, so every one of them is refused (403).
func TestCrictlWebSocketRefused(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		r := h.crictl(t, "exec", "--transport", "websocket", h.Ctr, "echo", "hi")
		if r.ExitCode == 0 || !strings.Contains(r.Stderr, "403") {
			t.Errorf("crictl exec --transport websocket: want a 403 failure (crictl's known defect); got %v", r)
		} else {
			t.Logf("crictl exec --transport websocket: %s", strings.TrimSpace(r.Stderr))
		}

		port := freePort(t)
		pf := startBackground(t, h.crictlCmd(t, t.Context(), "port-forward", "--transport", "websocket", h.Pod, fmt.Sprintf("%d:%d", port, h.HTTPDPort)))
		// crictl dials on the first connection; the request fails and so does crictl.
		body, err := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/", port), 5*time.Second)
		if err == nil && strings.Contains(body, "crisp busybox httpd") {
			t.Errorf("crictl port-forward --transport websocket worked; it failed when this test was written: update the matrix")
		}
		out := pf.WaitFor(t, regexp.MustCompile(`.*(403|bad handshake|upgrad).*`), 10*time.Second)
		t.Logf("crictl port-forward --transport websocket: %s", out[0])
	})
}

// crictl attach -i to a running sh: what goes in comes out.
func TestCrictlAttach(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		cmd := h.crictlCmd(t, t.Context(), "attach", "-i", h.AttachCtr)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		a := startBackground(t, cmd)
		token := fmt.Sprintf("attached-%d", time.Now().UnixNano())
		// sh reads commands only once the attach is in place; repeat until seen.
		deadline := time.Now().Add(20 * time.Second)
		for {
			if _, err := fmt.Fprintf(stdin, "echo %s\n", token); err != nil {
				t.Fatalf("writing to crictl attach: %v\n%s", err, a.Output())
			}
			if strings.Contains(a.Output(), token) {
				break
			}
			if exited, err := a.Exited(); exited {
				t.Fatalf("crictl attach exited: %v\n%s", err, a.Output())
			}
			if time.Now().After(deadline) {
				t.Fatalf("crictl attach: %q never came back:\n%s", token, a.Output())
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
}

// critest's streaming specs for exec (with and without a TTY) and attach
// over SPDY, offline with the harness's images. Its two port-forward specs are
// left out: they listen on the host's fixed ports 12001 and 12002 and serve on
// 12003, as the mock runtime's critest test (another package, run at the same
// time by `go test ./...`) does too. TestCrictlPortForward,
// TestPortForwardHostNetwork and TestCrispPortForward cover those paths on
// free ports.
func TestCritestStreaming(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		if _, err := os.Stat(suite.critest); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("critest is not built at %s: run `make deps`", suite.critest)
			}
			t.Skipf("critest is not built at %s: run `make deps`", suite.critest)
		}
		holdLock(t, critestLock)
		critest := func() Result {
			cmd := cmdWithTimeout(t, 5*time.Minute, suite.critest, "--runtime-endpoint", h.Endpoint,
				"--ginkgo.focus=Streaming", "--ginkgo.skip=portforward", "--ginkgo.no-color")
			cmd.Dir = t.TempDir()
			return run(cmd, nil)
		}
		// lostTTYOutput: the one failure is the runtime's TTY race
		// (serves.ttyRaces) losing a TTY exec's output.
		lostTTYOutput := func(r Result) bool {
			return r.ExitCode != 0 && h.spec.serves.ttyRaces && strings.Contains(r.Stdout, "1 Failed") &&
				strings.Contains(r.Stdout, "exec with tty=true") && strings.Contains(r.Stdout, "The stdout of exec should contain")
		}
		r := critest()
		for rerun := 1; lostTTYOutput(r) && rerun <= lostTTYReruns; rerun++ {
			t.Logf("critest on %s lost a TTY exec's output (the runtime's known race); running it again (%d of %d)", h.Name, rerun, lostTTYReruns)
			r = critest()
		}
		if r.ExitCode != 0 || !strings.Contains(r.Stdout, "3 Passed") {
			t.Fatalf("critest --ginkgo.focus=Streaming: %v", r)
		}
	})
}
