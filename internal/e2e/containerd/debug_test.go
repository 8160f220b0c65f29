package containerd

// The debugging aids against containerd 1.6 and 2.4: --trace-file and
// `crisp trace`, and exec across containers selected by label.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A trace of `exec -- echo hi` holds the handshake and a stdout frame with
// "hi", names no token, and `crisp trace` prints it; on both transports
// containerd speaks.
func TestCrispTraceFile(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		for _, tr := range []string{"spdy", "websocket"} {
			t.Run(tr, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "t.jsonl")
				r := h.crisp(t, "-v", "exec", "--transport", tr, "--trace-file", path, h.Ctr, "--", "echo", "hi")
				if r.ExitCode != 0 || r.Stdout != "hi\n" {
					t.Fatalf("crisp exec --trace-file: %v", r)
				}
				raw, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				// containerd's URLs are http://ADDR/exec/TOKEN; -v shows it.
				_, after, ok := strings.Cut(r.Stderr, "/exec/")
				if !ok {
					t.Fatalf("-v shows no streaming URL: %s", r.Stderr)
				}
				token := strings.FieldsFunc(after, func(c rune) bool { return c == ' ' || c == '?' || c == ')' })[0]
				if len(token) < 4 || strings.Contains(string(raw), token) {
					t.Errorf("the token %q is in the trace (or was not found):\n%s", token, raw)
				}
				var sawHandshake, sawHi bool
				for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
					var ev struct {
						Kind, Stream, Protocol, URL string
						Status                      int
						Data                        []byte
					}
					if err := json.Unmarshal([]byte(line), &ev); err != nil {
						t.Fatalf("line %q: %v", line, err)
					}
					if ev.Kind == "handshake" && ev.Status == 101 && ev.Protocol != "" && strings.HasSuffix(ev.URL, "/exec/REDACTED") {
						sawHandshake = true
					}
					if ev.Kind == "frame" && ev.Stream == "stdout" && string(ev.Data) == "hi\n" {
						sawHi = true
					}
				}
				if !sawHandshake || !sawHi {
					t.Errorf("trace lacks the upgraded handshake (%v) or the stdout frame with hi (%v):\n%s", sawHandshake, sawHi, raw)
				}
				p := h.crisp(t, "trace", path)
				if p.ExitCode != 0 || !strings.Contains(p.Stdout, `"hi\n"`) || !strings.Contains(p.Stdout, "HTTP 101") {
					t.Errorf("crisp trace: %v", p)
				}
			})
		}
	})
}

// newLabelledContainer is newContainer with CRI labels (which ContainerSpec
// does not carry): created in the harness's pod, started, removed at the end.
func (h *Harness) newLabelledContainer(t *testing.T, name string, labels map[string]string) string {
	t.Helper()
	cfg := map[string]any{
		"metadata": map[string]any{"name": name},
		"image":    map[string]any{"image": h.BusyboxImage},
		"command":  []string{"sleep", "2147483647"},
		"labels":   labels,
		"log_path": name + ".log",
		"linux":    map[string]any{},
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "container.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return h.crictlStart(t, h.Pod, path, h.PodConfig)
}

// crictlStart creates a container from the config file ctrPath in pod
// (whose config is podConfig) and starts it, with crictl; the test's
// cleanup removes it.
func (h *Harness) crictlStart(t *testing.T, pod, ctrPath, podConfig string) string {
	t.Helper()
	r := h.crictl(t, "create", pod, ctrPath, podConfig)
	if r.ExitCode != 0 {
		t.Fatalf("crictl create: %v", r)
	}
	id := strings.TrimSpace(r.Stdout)
	t.Cleanup(func() {
		if r := h.crictl(t, "rm", "-f", id); r.ExitCode != 0 {
			t.Logf("crictl rm -f %s: %v", id, r)
		}
	})
	if r := h.crictl(t, "start", id); r.ExitCode != 0 {
		t.Fatalf("crictl start %s: %v", id, r)
	}
	return id
}

// exec --label runs in the three labelled containers at once: three
// prefixed results, the highest exit code, -i refused.
func TestCrispExecByLabel(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		group := fmt.Sprintf("fan%d", time.Now().UnixNano())
		names := []string{group + "-a", group + "-b", group + "-c"}
		for i, name := range names {
			id := h.newLabelledContainer(t, name, map[string]string{"crisp.test/group": group})
			// Each container exits with its own code: 0, 1, 2.
			if r := h.crisp(t, "exec", id, "--", "sh", "-c", fmt.Sprintf("echo %d > /tmp/code", i)); r.ExitCode != 0 {
				t.Fatalf("writing the exit code: %v", r)
			}
		}
		r := h.crisp(t, "exec", "--label", "crisp.test/group="+group, "--", "sh", "-c", "echo hi; exit $(cat /tmp/code)")
		if r.ExitCode != 2 {
			t.Errorf("exit %d, want the highest code 2: %v", r.ExitCode, r)
		}
		for _, name := range names {
			if !strings.Contains(r.Stdout, name+" | hi\n") {
				t.Errorf("stdout lacks %q:\n%s", name+" | hi", r.Stdout)
			}
		}
		if !strings.Contains(r.Stderr, "ran in 3 container(s): 1 exited 0, 1 exited 1, 1 exited 2; exit status 2") {
			t.Errorf("summary missing: %s", r.Stderr)
		}
		if r := h.crisp(t, "exec", "-i", "--label", "crisp.test/group="+group, "--", "cat"); r.ExitCode != 125 || !strings.Contains(r.Stderr, "one stdin cannot be shared") {
			t.Errorf("exec -i --label: want 125 and the reason: %v", r)
		}
	})
}
