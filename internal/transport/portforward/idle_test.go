package portforward

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/transport"
)

// TestPortForwardFinishedIdle: over WebSocket v4, a connection whose local
// side has finished sending stays open while the remote side keeps sending
// (pauses shorter than FinishedIdle), gets all of it, and then ends by
// itself although the remote side never closes: with a reset, since crisp
// cannot know the remote side had finished (finish.go).
func TestPortForwardFinishedIdle(t *testing.T) {
	const chunks, pause, idle = 8, 50 * time.Millisecond, 500 * time.Millisecond
	app := startPFApp(t, func(c net.Conn) {
		var b [1]byte
		if _, err := io.ReadFull(c, b[:]); err != nil {
			return
		}
		for range chunks {
			time.Sleep(pause) // the remote side's pace, part of the scenario
			if _, err := c.Write([]byte("chunk")); err != nil {
				return
			}
		}
		_, _ = io.Copy(io.Discard, c) // never closes first
	})
	_, src := startStreamServer(t, streamserver.ProfileFull)
	f, err := NewForwarder(ForwarderOptions{Source: src, Offers: []transport.Offer{pfCases[2].offer}, FinishedIdle: idle})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	srv := serveLocal(t, f, app.port)
	defer func() {
		if err := srv.stop(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	}()
	c, err := net.Dial("tcp", srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got, err := io.ReadAll(c)
	took := time.Since(start)
	if err == nil {
		t.Errorf("the connection crisp closed ended cleanly: a cut would pass for an end")
	} else if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("after %d bytes: %v, want a reset", len(got), err)
	}
	if want := chunks * len("chunk"); len(got) != want {
		t.Errorf("got %d bytes, want %d: the connection was closed while the remote side was sending", len(got), want)
	}
	if took < chunks*pause+idle/2 {
		t.Errorf("ended after %v, before the remote side had been idle for %v", took, idle)
	}
}
