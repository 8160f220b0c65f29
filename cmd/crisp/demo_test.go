package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
)

// demoSocketDir is the temporary folder of the demo's socket, read from its
// transcript.
func demoSocketDir(t *testing.T, out string) string {
	t.Helper()
	m := regexp.MustCompile(`CRI on unix://(/\S+)/cri\.sock,`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the demo names no socket:\n%s", out)
	}
	return m[1]
}

// runDemo runs `crisp demo ARGS...` in a child process: the crisp built for
// the scripts (scriptCrisp). Out of process, because client-go leaves
// goroutines behind after some sessions the probe step opens (WebSocket
// heartbeats for a few seconds, the v1 error-stream sender for good), which a
// short-lived CLI does not mind and TestMain's goleak check would.
func runDemo(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	if testing.Short() {
		t.Skip("the whole demo runs for seconds; skipped under -short")
	}
	bin := scriptCrisp.Path(t)
	cmd := exec.Command(bin, append([]string{"demo"}, args...)...)
	cmd.Stdin = strings.NewReader("")
	return runCaptured(t, cmd, "crisp demo")
}

func TestDemoCommand(t *testing.T) {
	transcript, stderr, code := runDemo(t)
	if code != cmdutil.ExitOK {
		t.Fatalf("crisp demo exited %d, want 0\nstdout:\n%s\nstderr:\n%s", code, transcript, stderr)
	}
	// Every step's title, its command line and the output its check saw.
	want := []string{
		`(?m)^=== Step 1/6: probe: which streaming protocols the runtime speaks, and how well$`,
		`(?m)^\$ crisp -r unix:///\S+/cri\.sock probe demo --pod demo-pod --port \d+$`,
		`(?m)^port-forward\s+spdy\s+portforward\.k8s\.io\s+accepted .*round-trip:pass\b.*$`,
		`(?m)^ok: --transport auto picks exec over websocket v5\.channel\.k8s\.io, attach over websocket v5\.channel\.k8s\.io, port-forward over spdy portforward\.k8s\.io$`,

		`(?m)^=== Step 2/6: exec: the remote command's exit code passes through$`,
		`(?m)^\$ crisp -r \S+ exec demo -- sh -c 'echo hello from the container; exit 3'\nhello from the container\n\[exit status 3\]\nok: exit status 3`,

		`(?m)^=== Step 3/6: exec -i: the end of stdin reaches the remote command$`,
		`(?m)^\$ printf 'a\\nb\\n' \| crisp -r \S+ exec -i demo -- wc -l\n\s*2\n\[exit status 0\]\nok: `,

		`(?m)^=== Step 4/6: exec -t: the terminal's size reaches the remote TTY$`,
		`(?m)^\$ crisp -r \S+ exec -it demo -- stty size   # in a 40x120 terminal\n40 120\r?\nok: `,

		`(?m)^=== Step 5/6: attach: the container's output, then detach$`,
		`(?m)^\$ crisp -r \S+ attach -i demo   # then ctrl-p ctrl-q to detach\n(tick \d+\n)+\[exit status 0\]\nok: attached, saw "tick \d+", detached`,

		`(?m)^=== Step 6/6: port-forward: bytes through a forwarded port and back$`,
		`(?m)^Forwarding from 127\.0\.0\.1:\d+ -> \d+$`,
		`(?m)# answered "hello through the port-forward\\n"$`,
		`(?m)^ok: 31 bytes went from \S+ through the runtime to port \d+ in the pod and back$`,

		`(?m)^=== Try it yourself$`,
		`(?m)^  crisp mock-runtime --listen unix:///tmp/crisp\.sock$`,
		`(?m)^  crisp -r unix:///tmp/crisp\.sock exec -it demo sh$`,
		`(?m)^crisp demo: all 6 steps worked \(.*\); the mock runtime and its socket are removed on exit\.$`,
	}
	for _, re := range want {
		if !regexp.MustCompile(re).MatchString(transcript) {
			t.Errorf("the transcript lacks %s", re)
		}
	}
	if strings.Contains(transcript, "FAILED") {
		t.Errorf("a step failed")
	}
	if t.Failed() {
		t.Logf("transcript:\n%s\nstderr:\n%s", transcript, stderr)
	}
	dir := demoSocketDir(t, transcript)
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the demo's folder %s is still there (stat: %v)", dir, err)
	}
}

// cancelOnWrite cancels a context the first time the output contains mark:
// a Ctrl-C arriving while that step runs.
type cancelOnWrite struct {
	mark   string
	cancel context.CancelFunc

	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *cancelOnWrite) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.mark) {
		w.cancel()
	}
	return len(p), nil
}

func (w *cancelOnWrite) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestDemoInterrupted cancels the command context (what SIGINT does in Main)
// once the pod and container run, as step 1 starts: the demo says so, exits
// 130 and leaves nothing behind. (In process: nothing streams before step 1,
// so client-go leaves no goroutine behind; see runDemo.)
func TestDemoInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &cancelOnWrite{mark: "=== Step 1/6", cancel: cancel}
	var errOut bytes.Buffer
	f := &cmdutil.Factory{Streams: cmdutil.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: &errOut, IsTerminalIn: func() bool { return false }}, Getenv: func(string) string { return "" }}
	root := newRootCommand(f)
	root.SetArgs([]string{"demo"})
	err := root.ExecuteContext(ctx)
	transcript := out.String()
	if code := cmdutil.ExitStatus(err, false); code != cmdutil.ExitInterrupted {
		t.Fatalf("interrupted demo: error %v, exit %d, want %d\n%s", err, code, cmdutil.ExitInterrupted, transcript)
	}
	if !strings.Contains(transcript, "crisp demo: interrupted during step 1; tearing down") {
		t.Errorf("the transcript does not say it was interrupted:\n%s", transcript)
	}
	dir := demoSocketDir(t, transcript)
	if _, err := os.Stat(filepath.Join(dir, "cri.sock")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the socket is still there after an interrupted demo (stat: %v)", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the demo's folder %s is still there (stat: %v)", dir, err)
	}
}

// TestDemoLegacyProfile: the legacy protocols have no resize channel, so the
// TTY step is skipped with the reason, and the demo still exits 0.
func TestDemoLegacyProfile(t *testing.T) {
	transcript, stderr, code := runDemo(t, "--profile", "legacy")
	if code != cmdutil.ExitOK {
		t.Fatalf("crisp demo --profile legacy exited %d, want 0\nstdout:\n%s\nstderr:\n%s", code, transcript, stderr)
	}
	for _, want := range []string{
		"(profile legacy)",
		"ok: --transport auto picks exec over spdy v2.channel.k8s.io",
		"[exit status 3]\nok: exit status 3",
		"skipped: the runtime speaks v2.channel.k8s.io at best, which has no resize channel",
		"crisp demo: 5 steps worked, 1 skipped: profile legacy's protocols cannot carry it",
	} {
		if !strings.Contains(transcript, want) {
			t.Errorf("the transcript lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("transcript:\n%s", transcript)
	}
}

func TestDemoFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"demo", "--profile", "bogus"}, `--profile must be one of full, cri-streaming, conmon-rs, legacy; got "bogus"`},
		{[]string{"demo", "extra"}, `takes no arguments`},
	} {
		var out, errOut bytes.Buffer
		code := Main(tc.args, cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, IsTerminalIn: func() bool { return false }})
		if code != cmdutil.ExitUsage {
			t.Errorf("crisp %s exited %d, want %d", strings.Join(tc.args, " "), code, cmdutil.ExitUsage)
		}
		if !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("crisp %s: stderr %q lacks %q", strings.Join(tc.args, " "), errOut.String(), tc.want)
		}
		if out.Len() != 0 {
			t.Errorf("crisp %s printed %q on stdout before rejecting its flags", strings.Join(tc.args, " "), out.String())
		}
	}
}
