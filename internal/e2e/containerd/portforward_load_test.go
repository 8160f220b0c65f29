package containerd

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// pfLoadSize is what each connection of the load test sends and expects
// back from the pod's echo server.
const pfLoadSize = 1 << 20

// pfLoadCount is how many connections run at once (CRISP_PF_LOAD overrides:
// 300 reproduces the heavier figure).
func pfLoadCount(t *testing.T) int {
	if v := os.Getenv("CRISP_PF_LOAD"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			t.Fatalf("CRISP_PF_LOAD=%q: want a count from 1 to 1000", v)
		}
		return n
	}
	return 100
}

// 100 concurrent connections, each echoing 1 MiB through the pod's echo
// server (testdata/echoserver: busybox's `nc -ll -e cat` resets a few percent
// of such connections by itself, dialled directly at the pod IP too, which
// says nothing of the forward). containerd stops reading the SPDY session a
// failed connection was on, stalling every other connection on it; crisp
// spreads connections over a pool of sessions and closes a stalled one. With
// a reliable server every echo must arrive, on both transports, and
// port-forward must exit within seconds of SIGINT (here 100 echoes take 1-3 s
// with the machine loaded, 300 take 2-5 s). Bounded: 60 s for the echoes,
// 10 s for the exit.
func TestCrispPortForwardConcurrentLoad(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		const port = 9100
		h.newEchoServer(t, port)
		n := pfLoadCount(t)
		payload := pseudoRandom(pfLoadSize)
		for _, tr := range []string{"spdy", "websocket"} {
			t.Run(tr, func(t *testing.T) {
				pf := startBackground(t, h.crispCmd(t, t.Context(), "port-forward", "--transport", tr, h.Pod, fmt.Sprintf(":%d", port)))
				m := pf.WaitFor(t, regexp.MustCompile(fmt.Sprintf(`Forwarding from 127\.0\.0\.1:(\d+) -> %d`, port)), 30*time.Second)
				addr := "127.0.0.1:" + m[1]
				// The server may take a moment to listen after its container starts.
				ready := time.Now().Add(30 * time.Second)
				for {
					err := pfEcho(addr, payload[:1024], 10*time.Second)
					if err == nil {
						break
					}
					if time.Now().After(ready) {
						t.Fatalf("one small echo through the forward: %v", err)
					}
					time.Sleep(200 * time.Millisecond)
				}
				start := time.Now()
				deadline := start.Add(60 * time.Second)
				var wg sync.WaitGroup
				errs := make([]error, n)
				for i := range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						errs[i] = pfEcho(addr, payload, time.Until(deadline))
					}()
				}
				wg.Wait()
				intact := 0
				var first []string
				for i, err := range errs {
					if err == nil {
						intact++
					} else if len(first) < 5 {
						first = append(first, fmt.Sprintf("connection %d: %v", i, err))
					}
				}
				t.Logf("--transport %s: %d/%d concurrent 1 MiB echoes intact in %v", tr, intact, n, time.Since(start).Round(time.Millisecond))
				if intact < n {
					t.Errorf("--transport %s: %d of %d concurrent 1 MiB echoes intact, want all; first failures:\n%v", tr, intact, n, first)
				}
				// And the forward ends promptly on SIGINT even after the load.
				if err := pf.cmd.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
				stopAt := time.Now()
				select {
				case <-pf.done:
					t.Logf("--transport %s: exited %v after SIGINT", tr, time.Since(stopAt).Round(time.Millisecond))
				case <-time.After(10 * time.Second):
					t.Errorf("--transport %s: port-forward still running 10s after SIGINT", tr)
				}
			})
		}
	})
}

// pfEcho sends payload to the echo server at addr while reading it back and
// compares.
func pfEcho(addr string, payload []byte, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }() // the echo's outcome is decided by then
	if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	sent := make(chan error, 1)
	go func() {
		_, err := c.Write(payload)
		sent <- err
	}()
	got := make([]byte, len(payload))
	_, rerr := io.ReadFull(c, got)
	if rerr != nil {
		_ = c.Close() // unblock the writer; the read error is the one to report
	}
	serr := <-sent
	switch {
	case serr != nil:
		return fmt.Errorf("sending: %w", serr)
	case rerr != nil:
		return fmt.Errorf("receiving: %w", rerr)
	case !bytes.Equal(got, payload):
		return fmt.Errorf("the echo differs from what was sent")
	}
	return nil
}
