package portforward

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/base/tracefile"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/transport"
)

// tracedForward serves one listener to remote with a --trace-file; stop ends
// the forward and returns the trace's events.
type tracedForward struct {
	addr string
	stop func(t *testing.T) []tracefile.Event
}

func startTracedForward(t *testing.T, opts ForwarderOptions, remote uint16) tracedForward {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.jsonl")
	w, err := tracefile.Create(path, 16, false)
	if err != nil {
		t.Fatal(err)
	}
	opts.Config.TraceFile = w
	f, err := NewForwarder(opts)
	if err != nil {
		t.Fatal(err)
	}
	ls, err := ListenLocal([]string{"127.0.0.1"}, []PortMapping{{Remote: remote}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- f.Serve(ctx, ls[0].Listener, ls[0].Remote) }()
	stopped := false
	stop := func(t *testing.T) []tracefile.Event {
		t.Helper()
		stopped = true
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		_ = f.Close()
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		events, err := tracefile.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		return events
	}
	t.Cleanup(func() {
		if !stopped {
			stop(t)
		}
	})
	return tracedForward{addr: ls[0].Addr().String(), stop: stop}
}

// connEvents returns the open and end events of the trace's one connection.
func connEvents(t *testing.T, events []tracefile.Event) (open, end tracefile.Event) {
	t.Helper()
	var opens, ends []tracefile.Event
	for _, ev := range events {
		switch ev.Kind {
		case tracefile.KindOpen:
			opens = append(opens, ev)
		case tracefile.KindEnd:
			ends = append(ends, ev)
		}
	}
	if len(opens) != 1 || len(ends) != 1 {
		t.Fatalf("want one open and one end event, got %d and %d:\n%s", len(opens), len(ends), printed(events))
	}
	if opens[0].Request != ends[0].Request || opens[0].Port != ends[0].Port || opens[0].Op != "port-forward" || opens[0].Peer == "" {
		t.Errorf("open %+v and end %+v do not name the same connection", opens[0], ends[0])
	}
	return opens[0], ends[0]
}

func printed(events []tracefile.Event) string {
	var b strings.Builder
	_ = tracefile.Print(&b, events)
	return b.String()
}

// TestPortForwardTraceFileRecordsConnections: --trace-file records each
// forwarded connection's open and its end: a clean end, a reset and why, a
// failure, a close by the forward's end, with the bytes passed each way; and
// `crisp trace` prints them.
func TestPortForwardTraceFileRecordsConnections(t *testing.T) {
	spdy, ws := pfCases[0].offer, pfCases[2].offer
	t.Run("eof", func(t *testing.T) {
		skipWithoutSPDY(t, pfCases[0])
		app := startPFApp(t, halfCloseApp)
		_, src := startStreamServer(t, streamserver.ProfileFull)
		tf := startTracedForward(t, ForwarderOptions{Source: src, Offers: []transport.Offer{spdy}}, app.port)
		c := dialLocal(t, tf.addr)
		if _, err := c.Write([]byte("hello")); err != nil {
			t.Fatal(err)
		}
		_ = c.(*net.TCPConn).CloseWrite()
		got, err := io.ReadAll(c)
		if err != nil || len(got) != 32+256<<10 {
			t.Fatalf("read %d B, %v", len(got), err)
		}
		_ = c.Close()
		events := tf.stop(t)
		_, end := connEvents(t, events)
		if end.End != tracefile.EndEOF || end.BytesSent != 5 || end.BytesRecv != int64(len(got)) || end.Error != "" {
			t.Errorf("end %+v; want eof, sent 5, received %d", end, len(got))
		}
		out := printed(events)
		for _, want := range []string{"open      port", "eof: sent 5 B, received 262176 B", "connections    1 opened; ended: 1 eof, 0 reset, 0 error, 0 closed; 0 without an end"} {
			if !strings.Contains(out, want) {
				t.Errorf("printed trace lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("reset", func(t *testing.T) {
		app := startPFApp(t, func(c net.Conn) {
			b := make([]byte, 4)
			if _, err := io.ReadFull(c, b); err != nil {
				return
			}
			time.Sleep(time.Second) // answers after the idle wait below
			_, _ = c.Write(b)
			_, _ = io.Copy(io.Discard, c)
		})
		_, src := startStreamServer(t, streamserver.ProfileFull)
		tf := startTracedForward(t, ForwarderOptions{Source: src, Offers: []transport.Offer{ws}, FinishedIdle: 300 * time.Millisecond}, app.port)
		if err := halfClosedEcho(tf.addr, []byte("ping"), time.Now().Add(pfFaultBound)); err == nil {
			t.Fatal("the late answer came through; want a reset")
		}
		events := tf.stop(t)
		_, end := connEvents(t, events)
		if end.End != tracefile.EndReset || end.BytesSent != 4 || !strings.Contains(end.Reason, "sent nothing for 300ms") || end.Error != "" {
			t.Errorf("end %+v; want a reset after 4 B sent, its reason the idle wait", end)
		}
		if out := printed(events); !strings.Contains(out, "reset: sent 4 B, received 0 B reason ") {
			t.Errorf("printed trace lacks the reset:\n%s", out)
		}
	})
	t.Run("error", func(t *testing.T) {
		skipWithoutSPDY(t, pfCases[0])
		_, src := startStreamServer(t, streamserver.ProfileFull)
		tf := startTracedForward(t, ForwarderOptions{Source: src, Offers: []transport.Offer{spdy}}, closedPort(t))
		// crisp's reset can come before the dial has seen its connect
		// complete (a loaded machine): that is the reset too.
		c, err := net.Dial("tcp", tf.addr)
		if err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatal(err)
		}
		if err == nil {
			if got, err := io.ReadAll(c); err == nil {
				t.Errorf("read %q and a clean end from a connection that failed; want a reset", got)
			}
			_ = c.Close()
		}
		_, end := connEvents(t, tf.stop(t))
		if end.End != tracefile.EndError || !strings.Contains(end.Error, "runtime reported") {
			t.Errorf("end %+v; want an error naming the runtime's message", end)
		}
	})
	t.Run("stopped", func(t *testing.T) {
		skipWithoutSPDY(t, pfCases[0])
		got := make(chan struct{}, 1)
		app := startPFApp(t, func(c net.Conn) { // never answers
			b := make([]byte, 3)
			if _, err := io.ReadFull(c, b); err == nil {
				got <- struct{}{}
			}
			_, _ = io.Copy(io.Discard, c)
		})
		_, src := startStreamServer(t, streamserver.ProfileFull)
		tf := startTracedForward(t, ForwarderOptions{Source: src, Offers: []transport.Offer{spdy}, DrainTimeout: 50 * time.Millisecond}, app.port)
		c := dialLocal(t, tf.addr)
		if _, err := c.Write([]byte("abc")); err != nil {
			t.Fatal(err)
		}
		select {
		case <-got:
		case <-time.After(pfFaultBound):
			t.Fatal("the app never got the bytes")
		}
		_, end := connEvents(t, tf.stop(t))
		_ = c.Close()
		if end.End != tracefile.EndClosed || end.Reason != pfStopping || end.BytesSent != 3 {
			t.Errorf("end %+v; want closed by the forward's end after 3 B sent", end)
		}
	})
}

func dialLocal(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, pfFaultBound)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(pfFaultBound))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) uint16 {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := uint16(l.Addr().(*net.TCPAddr).Port)
	_ = l.Close()
	return port
}
