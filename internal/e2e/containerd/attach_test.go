package containerd

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"
)

// sendUntil writes input to w until out shows want (a fresh attach may miss
// what is written before it is in place).
func sendUntil(t *testing.T, w io.Writer, b *Background, input string, want *regexp.Regexp, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !want.MatchString(b.Output()) {
		if exited, err := b.Exited(); exited {
			t.Fatalf("exited (%v) before printing %q; output:\n%s", err, want, b.Output())
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q within %v; output:\n%s", want, timeout, b.Output())
		}
		if _, err := io.WriteString(w, input); err != nil {
			t.Fatalf("writing %q: %v; output:\n%s", input, err, b.Output())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitExit waits for b's command to end and returns its exit code.
func waitExit(t *testing.T, b *Background, timeout time.Duration) int {
	t.Helper()
	select {
	case <-b.done:
	case <-time.After(timeout):
		t.Fatalf("%v still running after %v; output:\n%s", b.cmd.Args, timeout, b.Output())
	}
	return b.cmd.ProcessState.ExitCode()
}

// crisp attach -i on every transport: input reaches the main process, its
// output comes back, and the detach keys leave it running (exit 0).
func TestCrispAttachDetach(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		for _, tr := range transports {
			t.Run(tr, func(t *testing.T) {
				cmd := h.crispCmd(t, t.Context(), "attach", "-i", "--transport", tr, h.AttachCtr)
				stdin, err := cmd.StdinPipe()
				if err != nil {
					t.Fatal(err)
				}
				a := startBackground(t, cmd)
				token := fmt.Sprintf("attach-%s-%d", tr, time.Now().UnixNano())
				sendUntil(t, stdin, a, "echo "+token+"\n", regexp.MustCompile(token), 20*time.Second)
				if _, err := io.WriteString(stdin, "\x10\x11"); err != nil { // ctrl-p, ctrl-q
					t.Fatal(err)
				}
				if code := waitExit(t, a, 20*time.Second); code != 0 {
					t.Fatalf("crisp attach --transport %s: exit %d after the detach keys, want 0; output:\n%s", tr, code, a.Output())
				}
				r := h.crictl(t, "inspect", "-o", "go-template", "--template", "{{.status.state}}", h.AttachCtr)
				if strings.TrimSpace(r.Stdout) != "CONTAINER_RUNNING" {
					t.Fatalf("the attached container after detaching: %v, want CONTAINER_RUNNING", r)
				}
			})
		}
	})
}

// When the attached process exits, crisp attach returns its exit status.
func TestCrispAttachExitCode(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		for _, tr := range transports {
			t.Run(tr, func(t *testing.T) {
				id := h.newContainer(t, ContainerSpec{Name: "attach-exit", Command: []string{"sh"}, Stdin: true})
				cmd := h.crispCmd(t, t.Context(), "attach", "-i", "--transport", tr, id)
				stdin, err := cmd.StdinPipe()
				if err != nil {
					t.Fatal(err)
				}
				a := startBackground(t, cmd)
				sendUntil(t, stdin, a, "echo ready\n", regexp.MustCompile("ready"), 20*time.Second)
				if _, err := io.WriteString(stdin, "exit 5\n"); err != nil {
					t.Fatal(err)
				}
				if code := waitExit(t, a, 20*time.Second); code != 5 {
					t.Fatalf("crisp attach --transport %s: exit %d after the process's `exit 5`, want 5; output:\n%s", tr, code, a.Output())
				}
			})
		}
	})
}

// On a runtime that ends an attach stream with the client's stdin (CRI-O),
// crisp attach says the container runs on and exits 0, with -i once its
// stdin ends and without -i at once. (containerd's stream lasts until the
// container exits: TestCrispAttachExitCode covers that.)
func TestCrispAttachEndsWithStdin(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		if !h.spec.serves.attachEndsWithStdin {
			t.Skipf("%s: an attach stream lasts until the container exits (TestCrispAttachExitCode)", h.Name)
		}
		id := h.newContainer(t, ContainerSpec{Name: "attach-stdin", Command: []string{"sh"}, Stdin: true})
		r := h.crispStdin(t, strings.NewReader("echo hi\n"), "attach", "-i", id)
		if r.ExitCode != 0 || !strings.Contains(r.Stderr, "ended the stream when stdin ended") || !strings.Contains(r.Stderr, "is still running") {
			t.Errorf("crisp attach -i with stdin that ends on %s: want exit 0 and the container said to run on; got %v", h.Name, r)
		}
		r = h.crisp(t, "attach", id)
		if r.ExitCode != 0 || !strings.Contains(r.Stderr, "as no stdin was sent") || !strings.Contains(r.Stderr, "is still running") {
			t.Errorf("crisp attach without -i on %s: want exit 0 and the container said to run on; got %v", h.Name, r)
		}
		st := h.crictl(t, "inspect", "-o", "go-template", "--template", "{{.status.state}}", id)
		if strings.TrimSpace(st.Stdout) != "CONTAINER_RUNNING" {
			t.Errorf("the container after both attaches: %v, want CONTAINER_RUNNING", st)
		}
	})
}
