package portforward

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/transport"
)

// TestServeAllReady: ServeAll negotiates, reports every bound listener
// with its actual local port once the forward is usable (no need to watch
// for output), serves them all, and closes them when ctx ends.
func TestServeAllReady(t *testing.T) {
	app := startPFApp(t, hashApp)
	_, src := startStreamServer(t, streamserver.ProfileFull)
	f := newTestForwarder(t, src, pfCases[0].offer, nil)
	ls, err := ListenLocal([]string{"127.0.0.1"}, []PortMapping{{Local: 0, Remote: app.port}, {Local: 0, Remote: app.port}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan []LocalListener, 1)
	served := make(chan error, 1)
	go func() { served <- f.ServeAll(ctx, ls, func(l []LocalListener) { ready <- l }) }()
	got := <-ready
	if len(got) != 2 {
		t.Fatalf("ready with %d listeners, want 2", len(got))
	}
	for i, l := range got {
		if l.Port() == 0 {
			t.Errorf("listener %d reports port 0", i)
		}
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if err := roundTrip(c, uint64(i), 64<<10); err != nil {
			t.Errorf("listener %d: %v", i, err)
		}
		_ = c.Close()
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("ServeAll: %v", err)
	}
	for i, l := range got {
		if c, err := net.Dial("tcp", l.Addr().String()); err == nil {
			_ = c.Close()
			t.Errorf("listener %d still accepts after ServeAll returned", i)
		}
	}
}

// TestServeAllNegotiationFails: nothing is reported ready and every
// listener is closed when no protocol is accepted.
func TestServeAllNegotiationFails(t *testing.T) {
	_, src := startStreamServer(t, streamserver.ProfileFull, "refuse-upgrade")
	f := newTestForwarder(t, src, pfCases[0].offer, nil)
	ls, err := ListenLocal([]string{"127.0.0.1"}, []PortMapping{{Local: 0, Remote: 1}})
	if err != nil {
		t.Fatal(err)
	}
	err = f.ServeAll(context.Background(), ls, func([]LocalListener) { t.Error("reported ready") })
	var neg *transport.NegotiationError
	if !errors.As(err, &neg) {
		t.Errorf("ServeAll: %v, want a negotiation error", err)
	}
	if c, err := net.Dial("tcp", ls[0].Addr().String()); err == nil {
		_ = c.Close()
		t.Error("listener still open after a failed negotiation")
	}
}

// TestPortForwardServeListener forwards through a local listener, as the
// command does.
func TestPortForwardServeListener(t *testing.T) {
	app := startPFApp(t, hashApp)
	_, src := startStreamServer(t, streamserver.ProfileFull)
	for _, tc := range pfCases {
		t.Run(tc.name, func(t *testing.T) {
			skipWithoutSPDY(t, tc)
			f := newTestForwarder(t, src, tc.offer, nil)
			ls, err := ListenLocal([]string{"127.0.0.1"}, []PortMapping{{Local: 0, Remote: app.port}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- f.Serve(ctx, ls[0].Listener, ls[0].Remote) }()
			for i := range 5 {
				c, err := net.Dial("tcp", ls[0].Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				if err := roundTrip(c, uint64(i), 64<<10); err != nil {
					t.Errorf("connection %d: %v", i, err)
				}
				_ = c.Close()
			}
			cancel()
			if err := <-served; err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
	}
}

func TestListenLocal(t *testing.T) {
	ls, err := ListenLocal([]string{"localhost"}, []PortMapping{{Local: 0, Remote: 80}, {Local: 0, Remote: 443}})
	if err != nil {
		t.Fatal(err)
	}
	ports := map[uint16]uint16{}
	for _, l := range ls {
		defer func() { _ = l.Close() }()
		if p, ok := ports[l.Remote]; ok && p != l.Port() {
			t.Errorf("remote %d got local ports %d and %d; want one port on every address", l.Remote, p, l.Port())
		}
		ports[l.Remote] = l.Port()
	}
	if len(ports) != 2 || ports[80] == 0 || ports[443] == 0 {
		t.Fatalf("listeners %v", ports)
	}
	// The same local port again is busy: a clear error, nothing left open.
	_, err = ListenLocal([]string{"127.0.0.1"}, []PortMapping{{Local: ports[80], Remote: 80}})
	if err == nil || !strings.Contains(err.Error(), "already in use") {
		t.Errorf("busy port: got %v", err)
	}
	// An address named twice is listened on once.
	dup, err := ListenLocal([]string{"localhost", "127.0.0.1", "127.0.0.1"}, []PortMapping{{Remote: 80}})
	if err != nil {
		t.Fatalf("localhost and 127.0.0.1 together: %v", err)
	}
	v4 := 0
	for _, l := range dup {
		if strings.HasPrefix(l.Addr().String(), "127.0.0.1:") {
			v4++
		}
		_ = l.Close()
	}
	if v4 != 1 {
		t.Errorf("%d listeners on 127.0.0.1, want 1", v4)
	}
	if _, err := ListenLocal([]string{"not-an-ip"}, []PortMapping{{Remote: 80}}); err == nil {
		t.Error("a host name other than localhost was accepted")
	}
}

// TestPortForwardServeDrain: when Serve's context ends, the listener closes
// at once, an open connection may finish its exchange, and Serve returns
// once it has; a connection that outlives the drain timeout is cut.
func TestPortForwardServeDrain(t *testing.T) {
	app := startPFApp(t, hashApp)
	_, src := startStreamServer(t, streamserver.ProfileFull)
	// stopWithOpen forwards one connection to completion, leaves a second
	// one open mid-request, then stops Serve.
	stopWithOpen := func(t *testing.T, drain time.Duration) (addr string, open net.Conn, served chan error) {
		f, err := NewForwarder(ForwarderOptions{Source: src, DrainTimeout: drain})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.Close() })
		srv := serveLocal(t, f, app.port)
		addr = srv.addr
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		// Make sure the connection is forwarded before stopping.
		if err := roundTrip(c, 1, 10); err != nil {
			t.Fatal(err)
		}
		c2, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c2.Close() })
		_, _ = c2.Write([]byte("x")) // forwarded, and the app waits for the rest
		srv.cancel()
		return addr, c2, srv.served
	}
	t.Run("open connection finishes", func(t *testing.T) {
		addr, c2, served := stopWithOpen(t, time.Hour)
		// The listener is closed: new connections are refused.
		for {
			c3, err := net.Dial("tcp", addr)
			if err != nil {
				break
			}
			_ = c3.Close()
		}
		select {
		case err := <-served:
			t.Fatalf("Serve returned (%v) while a connection was open", err)
		default:
		}
		_ = c2.Close()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	t.Run("drain timeout cuts", func(t *testing.T) {
		_, c2, served := stopWithOpen(t, time.Millisecond)
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		if n, err := io.Copy(io.Discard, c2); err != nil && !errors.Is(err, syscall.ECONNRESET) || n != 0 {
			t.Errorf("the cut connection delivered %d bytes, %v", n, err)
		}
	})
}

// emfileListener fails its first n Accepts with EMFILE, as a process at its
// open-files limit sees them, then accepts for real.
type emfileListener struct {
	net.Listener
	n int
}

func (l *emfileListener) Accept() (net.Conn, error) {
	if l.n > 0 {
		l.n--
		return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.Addr(), Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// TestPortForwardServeOutOfFiles: accept failing with EMFILE is said once,
// naming the limit and ulimit -n, retried with a backoff, and the end of it
// is said; the connection waiting meanwhile is then forwarded.
func TestPortForwardServeOutOfFiles(t *testing.T) {
	app := startPFApp(t, hashApp)
	_, src := startStreamServer(t, streamserver.ProfileFull)
	var report lockedBuffer
	f := newTestForwarder(t, src, pfCases[2].offer, &report)
	ls, err := ListenLocal([]string{"127.0.0.1"}, []PortMapping{{Remote: app.port}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- f.Serve(ctx, &emfileListener{Listener: ls[0].Listener, n: 5}, ls[0].Remote) }()
	c, err := net.Dial("tcp", ls[0].Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if err := roundTrip(c, 1, 64<<10); err != nil {
		t.Errorf("the connection that waited out the limit: %v", err)
	}
	_ = c.Close()
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	out := report.String()
	wantLimit := "open-files limit"
	if n := pfOpenFilesLimit(); n > 0 {
		wantLimit = fmt.Sprintf("open-files limit (%d)", n)
	}
	for _, want := range []string{"too many open files", wantLimit, "ulimit -n", "accepting on " + ls[0].Addr().String() + " again"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "too many open files"); n != 1 {
		t.Errorf("the limit was said %d times for one episode, want once:\n%s", n, out)
	}
}
