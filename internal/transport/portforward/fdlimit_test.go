//go:build linux

package portforward

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
	"github.com/crisp-cri/crisp/internal/transport"
)

// fdChildEnv carries the app's port to the child process of
// TestPortForwardWebSocketFinishedConnsClose.
const fdChildEnv = "CRISP_PF_FDLIMIT_CHILD_APP_PORT"

// fdChildLimit is the child's open-files limit: the forwarder, the streaming
// server and the test's own files fit many times over (with finished
// connections closed 50ms after going idle: at 1000 connections/s about 50
// are closing at any time), but 128 finished
// connections held open (four descriptors each in the child: local socket,
// WebSocket, the server's side of it, the server's dial to the app) do not.
const fdChildLimit = 512

// idleApp answers the app protocol like hashApp and then, like a server
// waiting for its client's next request (or for an end of input that
// WebSocket v4 cannot carry), stays open until the connection closes.
// active counts its open connections.
func idleApp(active *atomic.Int64) func(net.Conn) {
	return func(c net.Conn) {
		active.Add(1)
		defer active.Add(-1)
		hashApp(c)
		_, _ = io.Copy(io.Discard, c)
	}
}

// TestPortForwardWebSocketFinishedConnsClose: over the direct WebSocket
// protocol, 600 sequential connections that each finish locally while the
// remote side stays open all succeed in a process whose open-files limit
// is 512, and the remote ends are closed once idle: a finished connection
// no longer holds its sockets (and the remote server) forever. The forward
// runs in a child process with the lowered limit; the client and the app
// run here.
func TestPortForwardWebSocketFinishedConnsClose(t *testing.T) {
	if os.Getenv(fdChildEnv) != "" {
		t.Skip("in the child process")
	}
	if testing.Short() {
		t.Skip("600 connections through a child process; skipped under -short")
	}
	var active atomic.Int64
	app := startPFApp(t, idleApp(&active))

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestPortForwardFDLimitChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), fdChildEnv+"="+strconv.Itoa(int(app.port)))
	var stderr testkit.LockedBuffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	var addr string
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if a, ok := strings.CutPrefix(lines.Text(), "LISTEN "); ok {
			addr = a
			break
		}
	}
	go func() {
		_, _ = io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()
	if addr == "" {
		_ = stdin.Close()
		t.Fatalf("the child did not listen: %v\n%s", <-exited, stderr.String())
	}

	const conns = 600
	failures := 0
	start := time.Now()
	for i := range conns {
		if err := fdRoundTrip(addr, uint64(i)); err != nil {
			t.Errorf("connection %d: %v", i, err)
			if failures++; failures == 3 {
				t.Errorf("giving up after %d failures", failures)
				break
			}
		}
	}
	took := time.Since(start)
	// The remote ends close once idle: the app sees every connection end.
	closed := testkit.Poll(10*time.Second, func() bool { return active.Load() == 0 })
	left := active.Load()
	_ = stdin.Close()
	if err := <-exited; err != nil {
		t.Errorf("child: %v", err)
	}
	if !closed {
		t.Errorf("%d remote connection(s) still open 10s after the last one finished", left)
	}
	if out := stderr.String(); strings.Contains(out, "failed") || t.Failed() {
		t.Errorf("the child reported:\n%s", out)
	}
	t.Logf("%d connections in %v under an open-files limit of %d", conns, took.Round(time.Millisecond), fdChildLimit)
}

// fdRoundTrip runs one bounded connection of the app protocol and closes it.
func fdRoundTrip(addr string, seed uint64) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	if err := c.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return err
	}
	return roundTrip(c, seed, 4<<10)
}

// TestPortForwardFDLimitChild is the child of
// TestPortForwardWebSocketFinishedConnsClose: it lowers its open-files
// limit, forwards a local port over WebSocket v4 to the parent's app, says
// where it listens, and serves until its stdin ends.
func TestPortForwardFDLimitChild(t *testing.T) {
	port, err := strconv.Atoi(os.Getenv(fdChildEnv))
	if err != nil {
		t.Skip("run by TestPortForwardWebSocketFinishedConnsClose only")
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	rl.Cur = fdChildLimit
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	_, src := startStreamServer(t, streamserver.ProfileFull)
	var mu sync.Mutex
	f, err := NewForwarder(ForwarderOptions{
		Source: src, Offers: []transport.Offer{pfCases[2].offer}, FinishedIdle: 50 * time.Millisecond,
		Report: func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(os.Stderr, format+"\n", args...)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	ls, err := ListenLocal([]string{"127.0.0.1"}, []PortMapping{{Remote: uint16(port)}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- f.Serve(ctx, ls[0].Listener, ls[0].Remote) }()
	fmt.Printf("LISTEN %s\n", ls[0].Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
	cancel()
	if err := <-served; err != nil {
		t.Error(err)
	}
}
