package containerd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// The interop matrix of docs/interop.md: clients (crisp, crictl v1.37.0) ×
// servers (the mock runtime's four profiles, containerd 1.6 and 2.4, CRI-O) × protocol,
// from real runs. `make interop` writes the file (CRISP_UPDATE_INTEROP=1);
// `make test` fails when a fresh run differs from what is checked in. Only
// deterministic facts go in a cell: accepted or refused, exit codes, bytes
// delivered; never timings, and none of containerd's intermittent TTY losses.

const interopDoc = "docs/interop.md"

// interopServer is one runtime under test and what to point clients at.
type interopServer struct {
	name     string
	endpoint string
	pod, ctr string
	port     int
	echo     bool // port answers as an echo server (else an HTTP server)
}

func TestInteropMatrix(t *testing.T) {
	hs := harnesses(t)
	servers := []*interopServer{}
	for _, profile := range []string{"full", "cri-streaming", "conmon-rs", "legacy"} {
		servers = append(servers, startMockServer(t, profile))
	}
	ticker := []string{"sh", "-c", "while :; do echo tick; sleep 0.5; done"}
	for _, h := range hs {
		servers = append(servers, &interopServer{
			name: h.Label, endpoint: h.Endpoint, pod: h.Pod,
			ctr: h.newContainer(t, ContainerSpec{Name: "interop", Command: ticker}), port: h.HTTPDPort,
		})
	}

	cells := make([]map[string]string, len(servers))
	rowsBy := make([][]string, len(servers))
	t.Run("servers", func(t *testing.T) {
		for i, s := range servers {
			t.Run(s.name, func(t *testing.T) {
				t.Parallel()
				cells[i], rowsBy[i] = measureServer(t, s)
			})
		}
	})
	if t.Failed() {
		return
	}
	var probeRows []string
	for _, rows := range rowsBy {
		if len(rows) > len(probeRows) {
			probeRows = rows
		}
	}
	doc := renderInterop(servers, cells, probeRows)

	path := filepath.Join(suite.repo, interopDoc)
	if os.Getenv("CRISP_UPDATE_INTEROP") == "1" {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (generate it with `make interop`)", err)
	}
	if string(want) != doc {
		t.Errorf("%s differs from a fresh run; if the change is intended, run `make interop` and commit.\nfresh run:\n%s", interopDoc, doc)
	}
}

// startMockServer runs `crisp mock-runtime --profile P` with a pod and a
// ticking container made by crictl, and an echo server for port-forward
// (the mock's pods share the host loopback).
func startMockServer(t *testing.T, profile string) *interopServer {
	t.Helper()
	dir := testkit.SocketDir(t)
	endpoint := "unix://" + filepath.Join(dir, "cri.sock")
	mock := exec.Command(crispBinary(t), "mock-runtime", "--listen", endpoint, "--profile", profile)
	mock.Env = cleanEnv()
	startBackground(t, mock).WaitFor(t, regexp.MustCompile(`unix://`), time.Minute)

	s := &interopServer{name: "mock " + profile, endpoint: endpoint, echo: true}
	s.port = startEcho(t)
	cc := func(args ...string) string {
		r := runTool(t, suite.crictl, []string{"--runtime-endpoint", endpoint, "--image-endpoint", endpoint}, nil, time.Minute, args...)
		if r.ExitCode != 0 {
			t.Fatalf("crictl %v against the mock (%s): %v", args, profile, r)
		}
		return strings.TrimSpace(r.Stdout)
	}
	podJSON := writeInteropJSON(t, dir, "pod.json", map[string]any{
		"metadata": map[string]any{"name": "interop", "namespace": "default", "uid": "interop-" + profile},
		"linux":    map[string]any{}, "log_directory": filepath.Join(dir, "logs"),
	})
	ctrJSON := writeInteropJSON(t, dir, "ctr.json", map[string]any{
		"metadata": map[string]any{"name": "ticker"}, "image": map[string]any{"image": "busybox"},
		"command":  []string{"sh", "-c", "while :; do echo tick; sleep 0.5; done"},
		"log_path": "ticker.log", "linux": map[string]any{},
	})
	cc("pull", "busybox")
	s.pod = cc("runp", podJSON)
	s.ctr = cc("create", s.pod, ctrJSON, podJSON)
	cc("start", s.ctr)
	return s
}

func writeInteropJSON(t *testing.T, dir, name string, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// startEcho serves a TCP echo on a free loopback port until the test ends.
func startEcho(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { _ = conn.Close() }() // the peer's end is what counts
				_, _ = io.Copy(conn, conn)          // ends when either side closes
			}()
		}
	}()
	t.Cleanup(func() { _ = l.Close(); wg.Wait() }) // closing ends Accept
	return l.Addr().(*net.TCPAddr).Port
}

// runTool runs bin with the leading args, then args, under a timeout;
// ExitCode -1 means it was killed at the timeout.
func runTool(t *testing.T, bin string, lead []string, stdin io.Reader, timeout time.Duration, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(append([]string{}, lead...), args...)...)
	cmd.Env = append(cleanEnv(), "CRI_CONFIG_FILE="+crictlConfig(t))
	cmd.Cancel = func() error { return cmd.Process.Kill() }
	cmd.WaitDelay = 2 * time.Second
	return run(cmd, stdin)
}

var negotiatedRE = regexp.MustCompile(`negotiated (\S+) (\S+) at`)

// measureServer fills one column: cell key -> text. It also returns the
// probe's row keys in the probe's order.
func measureServer(t *testing.T, s *interopServer) (map[string]string, []string) {
	cells := map[string]string{}
	crispLead := []string{"-r", s.endpoint}
	crictlLead := []string{"--runtime-endpoint", s.endpoint, "--image-endpoint", s.endpoint}

	// Which protocols the server accepts: crisp probe, each offered alone.
	r := runTool(t, crispBinary(t), crispLead, nil, 3*time.Minute, "probe", "-o", "json", s.ctr, "--pod", s.pod)
	var report struct {
		Results []struct {
			Call, Transport, Protocol string
			Accepted                  bool
			Status                    int
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil {
		t.Errorf("%s: crisp probe -o json: %v\n%v", s.name, err, r)
		return cells, nil
	}
	var rows []string
	for _, res := range report.Results {
		key := fmt.Sprintf("probe|%s|%s|%s", res.Call, res.Transport, res.Protocol)
		rows = append(rows, key)
		cells[key] = "accepted"
		if !res.Accepted {
			cells[key] = fmt.Sprintf("refused (%d)", res.Status)
		}
	}

	for _, tr := range []string{"auto", "websocket", "spdy"} {
		// Exit code passed through, and which protocol carried it.
		r := runTool(t, crispBinary(t), crispLead, nil, time.Minute, "-v", "exec", "--transport", tr, s.ctr, "--", "sh", "-c", "echo hi; exit 7")
		cell := fmt.Sprintf("fails (exit %d)", r.ExitCode)
		if r.Stdout == "hi\n" {
			cell = fmt.Sprintf("exit %d", r.ExitCode)
			if r.ExitCode == 7 {
				cell = "exit 7 ✓"
			}
			if m := negotiatedRE.FindStringSubmatch(r.Stderr); m != nil {
				cell += fmt.Sprintf(" (%s %s)", strings.ToLower(m[1]), m[2])
			}
		}
		cells["crisp|exec "+tr] = cell

		// The end of stdin reaches the remote command.
		r = runTool(t, crispBinary(t), crispLead, strings.NewReader("a\nb\n"), 10*time.Second, "exec", "-i", "--transport", tr, s.ctr, "--", "wc", "-l")
		cells["crisp|stdin "+tr] = stdinCell(r)

		// A forwarded connection's round trip.
		cells["crisp|pf "+tr] = portForwardCell(t, s, crispBinary(t), append(append([]string{}, crispLead...), "port-forward", "--transport", tr, s.pod, fmt.Sprintf("0:%d", s.port)))
	}

	for _, tr := range []string{"spdy", "websocket"} {
		args := []string{"exec"}
		if tr == "websocket" {
			args = append(args, "--transport", "websocket")
		}
		r := runTool(t, suite.crictl, crictlLead, nil, time.Minute, append(args, s.ctr, "sh", "-c", "echo hi; exit 7")...)
		switch {
		case r.Stdout == "hi\n" && r.ExitCode == 7:
			cells["crictl|exec "+tr] = "exit 7 ✓"
		case r.Stdout == "hi\n":
			cells["crictl|exec "+tr] = fmt.Sprintf("exit %d (7 lost)", r.ExitCode)
		default:
			cells["crictl|exec "+tr] = fmt.Sprintf("fails (exit %d)", r.ExitCode)
		}
		r = runTool(t, suite.crictl, crictlLead, strings.NewReader("a\nb\n"), 10*time.Second, append(append([]string{}, args...), "-i", s.ctr, "wc", "-l")...)
		cells["crictl|stdin "+tr] = stdinCell(r)

		pf := append(append([]string{}, crictlLead...), "port-forward")
		if tr == "websocket" {
			pf = append(pf, "--transport", "websocket")
		}
		pf = append(pf, s.pod, fmt.Sprintf("%d:%d", freePort(t), s.port))
		cells["crictl|pf "+tr] = portForwardCell(t, s, suite.crictl, pf)
	}
	return cells, rows
}

func stdinCell(r Result) string {
	switch {
	case r.ExitCode == -1:
		return "hangs: EOF not delivered"
	case r.ExitCode == 0 && strings.TrimSpace(r.Stdout) == "2":
		return "2 ✓"
	}
	return fmt.Sprintf("fails (exit %d)", r.ExitCode)
}

// portForwardCell starts a forwarder (crisp or crictl), waits for its local
// port and checks one round trip through it.
func portForwardCell(t *testing.T, s *interopServer, bin string, args []string) string {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(cleanEnv(), "CRI_CONFIG_FILE="+crictlConfig(t))
	cmd.Cancel = func() error { return cmd.Process.Kill() }
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }() // killed at the end: its exit status says nothing
	defer func() { cancel(); <-exited }()
	// Wait for its listener, at most 20 s, and no longer than it runs.
	deadline := time.After(20 * time.Second)
	var local string
	for local == "" {
		if m := forwardingRE.FindStringSubmatch(out.String()); m != nil {
			local = m[1]
			break
		}
		select {
		case <-exited:
			if m := forwardingRE.FindStringSubmatch(out.String()); m == nil {
				return "fails: no listener"
			}
		case <-deadline:
			return "fails: no listener"
		case <-time.After(50 * time.Millisecond): // polling its output: no line callback here
		}
	}
	if err := roundTrip(net.JoinHostPort("127.0.0.1", local), s.echo); err != nil {
		return "fails: no round trip"
	}
	return "round trip ✓"
}

// roundTrip sends a request and checks the answer: an echo, or HTTP.
func roundTrip(addr string, echo bool) error {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }() // the answer was read (or not) already
	if err := conn.SetDeadline(time.Now().Add(15 * time.Second)); err != nil {
		return err
	}
	msg, want := "ping through the forward\n", "ping through the forward\n"
	if !echo {
		msg, want = "GET / HTTP/1.0\r\n\r\n", "HTTP/1."
	}
	if _, err := io.WriteString(conn, msg); err != nil {
		return err
	}
	got := make([]byte, len(want))
	if _, err := io.ReadFull(conn, got); err != nil {
		return err
	}
	if string(got) != want {
		return errors.New("unexpected answer " + string(got))
	}
	return nil
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func renderInterop(servers []*interopServer, cells []map[string]string, probeRows []string) string {
	var b strings.Builder
	header := func(first ...string) {
		cols := append([]string{}, first...)
		for _, s := range servers {
			cols = append(cols, s.name)
		}
		fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(cols, " | "), strings.Repeat(" --- |", len(cols)))
	}
	line := func(key string, first ...string) {
		cols := append([]string{}, first...)
		for _, c := range cells {
			v := c[key]
			if v == "" {
				v = "—"
			}
			cols = append(cols, v)
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(cols, " | "))
	}
	b.WriteString(`# Interop matrix

Generated by ` + "`make interop`" + ` from real runs (internal/e2e/containerd/interop_test.go):
crisp and crictl v1.37.0 against the mock runtime's four profiles, Debian's containerd 1.6,
containerd 2.4 and CRI-O 1.34 (both built from source by ` + "`make deps`" + `).
` + "`make test`" + ` reruns it and fails when this file differs. Cells hold only what is the same on
every run: accepted or refused (HTTP status), exit codes, bytes delivered.

## Which protocols each server speaks (` + "`crisp probe`" + `, each subprotocol offered alone)

`)
	header("call", "transport", "subprotocol")
	for _, key := range probeRows {
		parts := strings.SplitN(key, "|", 4)
		line(key, parts[1], parts[2], "`"+parts[3]+"`")
	}
	b.WriteString(`
## What a user gets

` + "`exec … sh -c 'echo hi; exit 7'`" + ` (the exit code passed through, and the protocol crisp
negotiated), ` + "`printf 'a\\nb\\n' | exec -i … wc -l`" + ` (the end of stdin reaches the command;
killed after 10 s otherwise), and one round trip through ` + "`port-forward`" + `.

`)
	header("client", "operation")
	for _, row := range []struct{ key, client, op string }{
		{"crisp|exec auto", "crisp", "exec"},
		{"crisp|exec websocket", "crisp", "exec --transport websocket"},
		{"crisp|exec spdy", "crisp", "exec --transport spdy"},
		{"crictl|exec spdy", "crictl", "exec"},
		{"crictl|exec websocket", "crictl", "exec --transport websocket"},
		{"crisp|stdin auto", "crisp", "exec -i, stdin EOF"},
		{"crisp|stdin websocket", "crisp", "exec -i --transport websocket, stdin EOF"},
		{"crisp|stdin spdy", "crisp", "exec -i --transport spdy, stdin EOF"},
		{"crictl|stdin spdy", "crictl", "exec -i, stdin EOF"},
		{"crictl|stdin websocket", "crictl", "exec -i --transport websocket, stdin EOF"},
		{"crisp|pf auto", "crisp", "port-forward"},
		{"crisp|pf websocket", "crisp", "port-forward --transport websocket"},
		{"crisp|pf spdy", "crisp", "port-forward --transport spdy"},
		{"crictl|pf spdy", "crictl", "port-forward"},
		{"crictl|pf websocket", "crictl", "port-forward --transport websocket"},
	} {
		line(row.key, row.client, "`"+row.op+"`")
	}
	return b.String()
}
