package portforward

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/transport/liveness"
)

// swallowProxy carries bytes between crisp and a streaming server on
// loopback until cut, then reads and drops everything both ways and closes
// nothing: packets dropped both ways.
type swallowProxy struct {
	ln     net.Listener
	target string
	cut    atomic.Bool
	mu     sync.Mutex
	conns  []net.Conn
	wg     sync.WaitGroup
}

func newSwallowProxy(t *testing.T, target string) *swallowProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &swallowProxy{ln: ln, target: target}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				_ = in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			p.wg.Add(2)
			go p.copy(out, in)
			go p.copy(in, out)
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *swallowProxy) copy(dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			_ = dst.Close()
			return
		}
		if p.cut.Load() {
			continue
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}

// A runtime that vanishes mid-connection (its packets dropped both ways)
// ends the forwarded connection on every transport, with the dead-peer
// error, instead of holding it for good (SPDY) or for TCP keepalive's
// ~150 s (WebSocket).
func TestDeadPeerEndsForwardedConnection(t *testing.T) {
	offers, err := transport.PortForwardOffers(transport.Auto)
	if err != nil {
		t.Fatal(err)
	}
	app := startPFApp(t, func(c net.Conn) {
		_, _ = c.Write([]byte("hello\n"))
		_, _ = io.Copy(io.Discard, c) // then silent until the end
	})
	for _, offer := range offers {
		t.Run(pfOfferName(offer), func(t *testing.T) {
			srv, src := startStreamServer(t, "full")
			proxy := newSwallowProxy(t, srv.Addr())
			viaProxy := func(ctx context.Context, ports []uint16) (string, error) {
				u, err := src(ctx, ports)
				return strings.Replace(u, srv.Addr(), proxy.ln.Addr().String(), 1), err
			}
			f, err := NewForwarder(ForwarderOptions{Source: viaProxy, Offers: []transport.Offer{offer}, Report: t.Logf,
				Config: transport.Config{UpgradeTimeout: 5 * time.Second, PeerTimeout: time.Second}})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = f.Close() }()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			fc, err := f.Dial(ctx, app.port)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = fc.Close() }()
			buf := make([]byte, 6)
			if _, err := io.ReadFull(fc, buf); err != nil {
				t.Fatalf("reading the app's greeting: %v", err)
			}
			proxy.cut.Store(true)
			ended := make(chan error, 1)
			go func() {
				_, err := io.Copy(io.Discard, fc)
				if err == nil {
					err = fc.RemoteError()
				}
				ended <- err
			}()
			select {
			case err := <-ended:
				if !errors.As(err, new(*liveness.DeadPeerError)) {
					t.Errorf("the connection ended with %v, want the dead-peer error", err)
				}
			case <-ctx.Done():
				t.Fatal("the forwarded connection hung after the runtime vanished")
			}
		})
	}
}
