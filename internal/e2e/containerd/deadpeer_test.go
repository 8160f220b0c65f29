package containerd

// Issue 29 item 8 on real runtimes: a streaming server whose packets are
// dropped both ways, and a frozen runtime, end `crisp exec` with 125 and the
// dead-peer message within --peer-timeout instead of holding it (SPDY for
// ~15 minutes, a frozen runtime for good); a quiet command and a paused
// local reader lose nothing.

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// peerTransports are the two transport families the liveness bound covers
// (auto picks one of them).
var peerTransports = []string{"spdy", "websocket"}

// deadPeerTimeout is the --peer-timeout of these tests: short, so they run
// in seconds, and still many pings' worth.
const deadPeerTimeout = "5s"

// deadPeerGuard bounds the wait for crisp to end once the peer is gone. It
// is a hang guard, not a timing goal: without the liveness bound SPDY hangs
// ~15 minutes and WebSocket ~150 s (TCP keepalive), and a frozen runtime
// holds both for good.
const deadPeerGuard = 60 * time.Second

// deadPeerMessage is what crisp says when the peer gave no sign of life
// (transport/liveness.DeadPeerError: its watch or the kernel's
// TCP_USER_TIMEOUT ended the connection).
var deadPeerMessage = regexp.MustCompile(`(no sign of life from the peer at|neither took nor acknowledged what crisp sent).*--peer-timeout sets the bound`)

// streamingLine is what the quiet command prints once its session streams.
var streamingLine = regexp.MustCompile(`^streaming$`)

// startQuietExec runs `crisp exec` of a long quiet command in ctr over tr
// and returns it once the session streams.
func startQuietExec(t *testing.T, h *Harness, tr, ctr string) *Background {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	t.Cleanup(cancel)
	cmd := h.crispCmd(t, ctx, "exec", "--transport", tr, "--peer-timeout", deadPeerTimeout, ctr, "--", "sh", "-c", "echo streaming; exec sleep 300")
	b := startBackground(t, cmd)
	b.WaitFor(t, streamingLine, time.Minute)
	return b
}

// wantDeadPeerExit waits (deadPeerGuard at most) for crisp to end after its
// peer went away and checks it exited 125 saying so.
func wantDeadPeerExit(t *testing.T, b *Background, what string) {
	t.Helper()
	start := time.Now()
	code := waitExit(t, b, deadPeerGuard)
	t.Logf("%s: crisp ended %v after it, exit %d", what, time.Since(start).Round(100*time.Millisecond), code)
	if code != 125 || !deadPeerMessage.MatchString(b.Output()) {
		t.Fatalf("%s: want exit 125 and a message matching %q; got exit %d, output:\n%s", what, deadPeerMessage, code, b.Output())
	}
}

// A streaming connection whose packets are dropped both ways mid-session
// (the runtime vanished: a cut network, a dead node) ends `crisp exec` with
// 125 and the dead-peer message on SPDY and WebSocket, on every runtime.
// Before the liveness bound SPDY hung ~15 minutes (its pings keep
// unacknowledged data in flight, so keepalive never fires) and WebSocket
// ~150 s. The DROP rules match this session's connection alone (both
// ports), so other sessions on the runtime are untouched.
func TestCrispExecDroppedStreamingConnection(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		for _, tool := range []string{"iptables", "ip6tables", "ss"} {
			if _, err := exec.LookPath(tool); err != nil {
				skipOrFail(t, tool+" is not installed (the test drops one connection's packets with iptables, found with ss): apt-get install iptables iproute2")
			}
		}
		ctr := h.newContainer(t, ContainerSpec{Name: "deadpeer"})
		for _, tr := range peerTransports {
			t.Run(tr, func(t *testing.T) {
				t.Parallel()
				b := startQuietExec(t, h, tr, ctr)
				local, remote := streamingConn(t, b.cmd.Process.Pid)
				dropBothWays(t, local, remote)
				wantDeadPeerExit(t, b, fmt.Sprintf("packets between %s and %s dropped", local, remote))
			})
		}
	})
}

// streamingConn is the one established TCP connection of process pid (the
// session's streaming connection: the CRI calls go over a unix socket), as
// its local and remote addresses.
func streamingConn(t *testing.T, pid int) (local, remote string) {
	t.Helper()
	owner := fmt.Sprintf("pid=%d,", pid)
	out, err := exec.Command("ss", "-Htnp", "state", "established").CombinedOutput()
	if err != nil {
		t.Fatalf("ss -Htnp state established: %v\n%s", err, out)
	}
	var found [][2]string
	for _, line := range strings.Split(string(out), "\n") {
		// Recv-Q Send-Q Local:Port Peer:Port Process (no State column
		// with a state filter).
		if f := strings.Fields(line); len(f) >= 5 && strings.Contains(line, owner) {
			found = append(found, [2]string{f[2], f[3]})
		}
	}
	if len(found) != 1 {
		t.Fatalf("want crisp (pid %d) to hold one established TCP connection, the streaming one; ss shows %v:\n%s", pid, found, out)
	}
	return found[0][0], found[0][1]
}

// dropBothWays drops every packet between local and remote (host:port as ss
// prints them) until t ends: two iptables INPUT rules, one per direction,
// matching both addresses and ports.
func dropBothWays(t *testing.T, local, remote string) {
	t.Helper()
	lh, lp := splitSSAddr(t, local)
	rh, rp := splitSSAddr(t, remote)
	tool := "iptables"
	if net.ParseIP(lh).To4() == nil {
		tool = "ip6tables"
	}
	for _, rule := range [][]string{
		{"INPUT", "-p", "tcp", "-s", lh, "--sport", lp, "-d", rh, "--dport", rp, "-j", "DROP"},
		{"INPUT", "-p", "tcp", "-s", rh, "--sport", rp, "-d", lh, "--dport", lp, "-j", "DROP"},
	} {
		if out, err := exec.Command(tool, append([]string{"-w", "-I"}, rule...)...).CombinedOutput(); err != nil {
			t.Fatalf("%s -I %s: %v\n%s", tool, strings.Join(rule, " "), err, out)
		}
		t.Cleanup(func() {
			if out, err := exec.Command(tool, append([]string{"-w", "-D"}, rule...)...).CombinedOutput(); err != nil {
				t.Errorf("%s -D %s: %v\n%s", tool, strings.Join(rule, " "), err, out)
			}
		})
	}
}

// splitSSAddr splits ss's host:port ([v6]:port, v4-mapped v6 as the v4
// address) into an address iptables takes and a port.
func splitSSAddr(t *testing.T, addr string) (host, port string) {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("ss address %q: %v", addr, err)
	}
	ip := net.ParseIP(strings.TrimPrefix(host, "::ffff:"))
	if ip == nil {
		t.Fatalf("ss address %q: %q is no IP address", addr, host)
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String(), port
	}
	return ip.String(), port
}

// A frozen runtime (SIGSTOP mid-session: its kernel still acknowledges
// what crisp sends, nothing answers) ends `crisp exec` with 125 and the
// dead-peer message on SPDY and WebSocket. Before the liveness bound both
// hung for good. The runtimes' processes serve every test at once, so the
// runtime frozen here is crisp's own mock, started by the test, on the same
// streaming server library the runtimes use.
func TestCrispExecFrozenRuntime(t *testing.T) {
	track(t, "")
	if suite.reason != "" {
		skipOrFail(t, suite.reason)
	}
	for _, tr := range peerTransports {
		t.Run(tr, func(t *testing.T) {
			t.Parallel()
			mock, h := startFreezableMock(t)
			ctr := mockContainer(t, h.Endpoint)
			b := startQuietExec(t, h, tr, ctr)
			if err := mock.Signal(syscall.SIGSTOP); err != nil {
				t.Fatalf("SIGSTOP the mock runtime (pid %d): %v", mock.Pid, err)
			}
			wantDeadPeerExit(t, b, "runtime frozen (SIGSTOP)")
		})
	}
}

// startFreezableMock runs `crisp mock-runtime` as a process of its own, to
// be stopped with SIGSTOP, and returns it with a Harness that points crisp
// at it. At the end of the test it is continued and stopped with SIGINT,
// so it ends the processes it started.
func startFreezableMock(t *testing.T) (*os.Process, *Harness) {
	t.Helper()
	endpoint := "unix://" + filepath.Join(testkit.SocketDir(t), "cri.sock") // short: a socket path holds 108 bytes
	cmd := exec.Command(crispBinary(t), "mock-runtime", "--listen", endpoint)
	cmd.Env = cleanEnv()
	b := startBackground(t, cmd)
	t.Cleanup(func() { // before startBackground's kill: cleanups run last first
		_ = cmd.Process.Signal(syscall.SIGCONT) // it may have exited
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-b.done:
		case <-time.After(30 * time.Second):
			t.Errorf("the mock runtime (pid %d) did not end within 30s of SIGCONT and SIGINT; output:\n%s", cmd.Process.Pid, b.Output())
		}
	})
	b.WaitFor(t, regexp.MustCompile(`serving CRI on`), time.Minute)
	return cmd.Process, &Harness{Name: "mock", Endpoint: endpoint}
}

// mockContainer creates and starts a sleeping container in a pod of the
// mock at endpoint, with crictl, and returns its ID.
func mockContainer(t *testing.T, endpoint string) string {
	t.Helper()
	dir := t.TempDir()
	cc := func(args ...string) string {
		r := runTool(t, suite.crictl, []string{"--runtime-endpoint", endpoint, "--image-endpoint", endpoint}, nil, time.Minute, args...)
		if r.ExitCode != 0 {
			t.Fatalf("crictl %v against the mock: %v", args, r)
		}
		return strings.TrimSpace(r.Stdout)
	}
	podJSON := writeInteropJSON(t, dir, "pod.json", map[string]any{
		"metadata": map[string]any{"name": "frozen", "namespace": "default", "uid": fmt.Sprintf("frozen-%d", time.Now().UnixNano())},
		"linux":    map[string]any{}, "log_directory": dir,
	})
	ctrJSON := writeInteropJSON(t, dir, "ctr.json", map[string]any{
		"metadata": map[string]any{"name": "sleeper"}, "image": map[string]any{"image": "busybox"},
		"command": []string{"sleep", "3600"}, "log_path": "sleeper.log", "linux": map[string]any{},
	})
	cc("pull", "busybox")
	pod := cc("runp", podJSON)
	ctr := cc("create", pod, ctrJSON, podJSON)
	cc("start", ctr)
	return ctr
}

// A live command that is quiet for more than twice --peer-timeout, and a
// local reader that takes nothing for that long while the command's output
// waits, are not ended on any runtime and lose nothing: the runtime answers
// the pings, and time crisp itself does not read is not silence. (The
// issue's case is `| less` paused 70 s with the default 60 s; the bound and
// the pause are scaled down together.)
func TestCrispExecQuietAndPausedLoseNothing(t *testing.T) {
	const pause = 12 * time.Second
	eachRuntime(t, func(t *testing.T, h *Harness) {
		for _, tr := range peerTransports {
			t.Run("quiet/"+tr, func(t *testing.T) {
				t.Parallel()
				script := fmt.Sprintf("echo begin; sleep %d; echo end", int(pause/time.Second))
				r := h.crisp(t, "exec", "--transport", tr, "--peer-timeout", deadPeerTimeout, h.Ctr, "--", "sh", "-c", script)
				if r.ExitCode != 0 || r.Stdout != "begin\nend\n" {
					t.Fatalf("crisp exec --peer-timeout %s of a command quiet for %v: want exit 0, stdout %q; got %v", deadPeerTimeout, pause, "begin\nend\n", r)
				}
			})
			t.Run("paused/"+tr, func(t *testing.T) {
				t.Parallel()
				pausedReader(t, h, tr, pause)
			})
		}
	})
}

// pausedReader runs `crisp exec` of a command printing a few MiB into a
// pipe the test leaves unread for pause, then reads it all and checks every
// line came.
func pausedReader(t *testing.T, h *Harness, tr string, pause time.Duration) {
	const lines = 400000 // 2.7 MB, many times the pipe's and sockets' buffers
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := h.crispCmd(t, ctx, "exec", "--transport", tr, "--peer-timeout", deadPeerTimeout, h.Ctr, "--", "seq", "1", fmt.Sprint(lines))
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pr.Close() }() // a pipe's read end closes without error
	cmd.Stdout = pw
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = pw.Close() // crisp holds its own copy
	time.Sleep(pause)
	out, readErr := io.ReadAll(pr)
	waitErr := cmd.Wait()
	var want strings.Builder
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	if readErr != nil || waitErr != nil || string(out) != want.String() {
		t.Fatalf("crisp exec --peer-timeout %s with stdout unread for %v: want exit 0 and %d lines (%d bytes); got %v (read: %v), %d bytes, stderr:\n%s",
			deadPeerTimeout, pause, lines, want.Len(), waitErr, readErr, len(out), stderr.String())
	}
}
