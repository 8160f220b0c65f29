package containerd

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// crisp against containerd 1.6 and 2.4. New crisp tests go here (or in more
// files of this package): eachRuntime(t, func(t, h) {...}) runs the body once
// per runtime; in it h.crisp(t, args...) runs the binary built from
// ./cmd/crisp with CONTAINER_RUNTIME_ENDPOINT set to that runtime's harness,
// h.crispCmd gives the *exec.Cmd for stdin pipes, port-forwards and attach
// (see startBackground).

func TestCrispVersion(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		r := h.crisp(t, "version")
		if r.ExitCode != 0 {
			t.Fatalf("crisp version: %v", r)
		}
		for _, want := range []string{h.spec.runtimeName, "v1"} {
			if !strings.Contains(r.Stdout, want) {
				t.Errorf("crisp version lacks %q:\n%s", want, r.Stdout)
			}
		}
	})
}

// transports are crisp's --transport values; containerd (1.6 and 2.4) accepts a
// protocol of each (SPDY v4, WebSocket v4.channel.k8s.io).
var transports = []string{"auto", "spdy", "websocket"}

// crisp passes the remote exit code through and keeps stdout and stderr apart
// on every transport (crictl turns 7 into 1: TestCrictlExecExitCodeLost).
func TestCrispExec(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		for _, tr := range transports {
			t.Run(tr, func(t *testing.T) {
				r := h.crisp(t, "exec", "--transport", tr, h.Ctr, "--", "sh", "-c", "echo out; echo err >&2; exit 7")
				if r.ExitCode != 7 || r.Stdout != "out\n" || !strings.Contains(r.Stderr, "err\n") {
					t.Fatalf("crisp exec --transport %s: want stdout %q, stderr with %q, exit 7; got %v", tr, "out\n", "err\n", r)
				}
			})
		}
	})
}

func TestCrispExecSync(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		r := h.crisp(t, "exec", "-s", h.Ctr, "--", "sh", "-c", "echo out; echo err >&2; exit 3")
		if r.ExitCode != 3 || r.Stdout != "out\n" || !strings.Contains(r.Stderr, "err\n") {
			t.Fatalf("crisp exec -s: want stdout %q, stderr with %q, exit 3; got %v", "out\n", "err\n", r)
		}
	})
}

// crisp's own failures exit 125, whatever the remote would have done.
func TestCrispExecFailures(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		r := h.crisp(t, "exec", "no-such-container", "--", "true")
		if r.ExitCode != 125 || !strings.Contains(r.Stderr, "no-such-container") {
			t.Errorf("crisp exec in a missing container: want exit 125 naming it; got %v", r)
		}
		r = h.crisp(t, "exec", h.Ctr, "--", "no-such-command")
		if r.ExitCode == 0 || !strings.Contains(r.Stderr, "executable file not found") {
			t.Errorf("crisp exec no-such-command: want a failure naming the missing executable; got %v", r)
		}
	})
}

// The end of stdin reaches the remote process on the transports that can
// carry it (auto picks SPDY on containerd; WebSocket v4 cannot).
func TestCrispExecStdinEOF(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		for _, tr := range []string{"auto", "spdy"} {
			t.Run(tr, func(t *testing.T) {
				r := h.crispStdin(t, strings.NewReader("a\nb\n"), "exec", "-i", "--transport", tr, h.Ctr, "--", "wc", "-l")
				if r.ExitCode != 0 || strings.TrimSpace(r.Stdout) != "2" {
					t.Fatalf("crisp exec -i --transport %s wc -l with 2 lines on stdin: want 2; got %v", tr, r)
				}
			})
		}
	})
}

// WebSocket v4 (containerd has no v5) cannot carry the end of stdin: with
// piped stdin crisp fails fast (exit 125, why, and what to use) instead of
// leaving a command that reads to the end waiting forever; over SPDY the
// same command gets its input and its end.
func TestCrispExecStdinEOFWebSocketV4(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		r := h.crispStdin(t, strings.NewReader("a\nb\n"), "exec", "-i", "--transport", "websocket", h.Ctr, "--", "wc", "-l")
		if r.ExitCode != 125 || !strings.Contains(r.Stderr, "v4.channel.k8s.io cannot pass the end of stdin") || !strings.Contains(r.Stderr, "--transport spdy") {
			t.Fatalf("crisp exec -i --transport websocket wc -l: want exit 125 saying v4 cannot end stdin and naming --transport spdy; got %v", r)
		}
		r = h.crispStdin(t, strings.NewReader("a\nb\n"), "exec", "-i", "--transport", "spdy", h.Ctr, "--", "wc", "-l")
		if r.ExitCode != 0 || strings.TrimSpace(r.Stdout) != "2" {
			t.Fatalf("crisp exec -i --transport spdy wc -l: want 2 and exit 0; got %v", r)
		}
	})
}

// 64 MiB through crisp exec: out on every transport, in where stdin can end.
// Under load the output took long enough for client-go's WebSocket pings to
// make the server reset the connection it had closed, losing the tail
// (docs/runtimes.md, "WebSocket pings and a slow reader"); crisp sends none
// now. One case is still open: containerd 1.6 dropped a SPDY session once,
// under two test runs at once, and crisp said so; that alone is retried.
func TestCrispExecIntegrity64MiB(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		const size = 64 << 20
		want := bytes.Repeat([]byte("crisp-integrity\n"), size/16+1)[:size]
		for _, tr := range transports {
			t.Run("stdout/"+tr, func(t *testing.T) {
				args := []string{"exec", "--transport", tr, h.Ctr, "--", "sh", "-c", fmt.Sprintf("yes crisp-integrity | head -c %d", size)}
				r := h.crisp(t, args...)
				if r.ExitCode == 125 && strings.Contains(r.Stderr, "over SPDY") && strings.Contains(r.Stderr, "without the command's exit status") {
					t.Logf("%s dropped the SPDY session and crisp said so (got %d bytes): %s; once more", h.Name, len(r.Stdout), r.Stderr)
					r = h.crisp(t, args...)
				}
				if r.ExitCode != 0 || r.Stdout != string(want) {
					t.Fatalf("crisp exec --transport %s stdout: want %d bytes of `yes crisp-integrity`; got %d bytes, exit %d, err %v, stderr %q",
						tr, size, len(r.Stdout), r.ExitCode, r.Err, r.Stderr)
				}
			})
		}
		data := pseudoRandom(size)
		sum := sha256.Sum256(data)
		for _, tr := range []string{"auto", "spdy"} {
			t.Run("stdin/"+tr, func(t *testing.T) {
				r := h.crispStdin(t, bytes.NewReader(data), "exec", "-i", "--transport", tr, h.Ctr, "--", "sha256sum")
				if r.ExitCode != 0 || !strings.HasPrefix(r.Stdout, hex.EncodeToString(sum[:])) {
					t.Fatalf("crisp exec -i --transport %s sha256sum of 64 MiB: want %x; got %v", tr, sum, r)
				}
			})
		}
	})
}
