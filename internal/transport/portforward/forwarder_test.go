package portforward

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/mockruntime/certs"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"

	"github.com/crisp-cri/crisp/internal/transport"
)

// pfCase is one port-forward protocol pinned alone.
type pfCase struct {
	name  string
	offer transport.Offer
}

var pfCases = []pfCase{
	{"spdy", transport.Offer{Transport: transport.SPDY, Protocols: []string{transport.PortForwardSPDY}}},
	{"tunnel", transport.Offer{Transport: transport.WebSocket, Protocols: []string{transport.PortForwardTunnel}}},
	{"websocket-v4", transport.Offer{Transport: transport.WebSocket, Protocols: []string{transport.PortForwardWebSocket}}},
	{"websocket-v4-base64", transport.Offer{Transport: transport.WebSocket, Protocols: []string{transport.PortForwardWebSocketBase64}}},
}

func newTestForwarder(t testing.TB, src URLSource, offer transport.Offer, report *lockedBuffer) *Forwarder {
	t.Helper()
	return newTestForwarderConfig(t, src, offer, report, transport.Config{})
}

// newTestForwarderConfig is newTestForwarder with cfg.
func newTestForwarderConfig(t testing.TB, src URLSource, offer transport.Offer, report *lockedBuffer, cfg transport.Config) *Forwarder {
	t.Helper()
	opts := ForwarderOptions{Source: src, Offers: []transport.Offer{offer}, Config: cfg}
	if report != nil {
		opts.Report = report.Printf
	}
	f, err := NewForwarder(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// serving is a forwarder serving one local loopback listener in a test.
type serving struct {
	addr   string // the listener's address, 127.0.0.1:PORT
	cancel context.CancelFunc
	served chan error // Serve's result
}

// serveLocal listens on a free loopback port for the app's remote port and
// serves it through f until stop (or cancel).
func serveLocal(t testing.TB, f *Forwarder, remote uint16) *serving {
	t.Helper()
	ls, err := ListenLocal([]string{"127.0.0.1"}, []PortMapping{{Remote: remote}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &serving{addr: ls[0].Addr().String(), cancel: cancel, served: make(chan error, 1)}
	go func() { s.served <- f.Serve(ctx, ls[0].Listener, ls[0].Remote) }()
	return s
}

// stop ends Serve and returns its error.
func (s *serving) stop() error {
	s.cancel()
	return <-s.served
}

func TestPortForwardOffers(t *testing.T) {
	for _, tc := range []struct {
		t    transport.Transport
		want []string
	}{
		{transport.Auto, []string{"SPDY portforward.k8s.io", "WebSocket SPDY/3.1+portforward.k8s.io", "WebSocket v4.channel.k8s.io,v4.base64.channel.k8s.io"}},
		{transport.WebSocket, []string{"WebSocket SPDY/3.1+portforward.k8s.io", "WebSocket v4.channel.k8s.io,v4.base64.channel.k8s.io"}},
		{transport.SPDY, []string{"SPDY portforward.k8s.io"}},
	} {
		offers, err := transport.PortForwardOffers(tc.t)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, o := range offers {
			got = append(got, o.String())
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%s: got %q, want %q", tc.t, got, tc.want)
		}
	}
	if _, err := pfKindOf(transport.Offer{Transport: transport.SPDY, Protocols: []string{transport.PortForwardWebSocket}}); err == nil {
		t.Error("v4.channel.k8s.io over SPDY was accepted")
	}
	if _, err := pfKindOf(transport.Offer{Transport: transport.WebSocket, Protocols: []string{transport.PortForwardTunnel, transport.PortForwardWebSocket}}); err == nil {
		t.Error("the tunnel offered with the direct protocol was accepted")
	}
}

// TestPortForwardConcurrent is the acceptance test: per protocol, 100
// concurrent connections through a local listener, each moving 1 MiB both
// ways, checked with sha256; goleak (TestMain) checks nothing is left.
func TestPortForwardConcurrent(t *testing.T) {
	app := startPFApp(t, hashApp)
	_, src := startStreamServer(t, streamserver.ProfileFull)
	const conns, size = 100, 1 << 20
	for _, tc := range pfCases {
		t.Run(tc.name, func(t *testing.T) {
			skipWithoutSPDY(t, tc)
			forwardConcurrently(t, src, app, tc, conns, size, time.Minute)
		})
	}
}

// TestPortForwardResetFault: the 3rd forwarded connection is reset by the
// runtime; it fails with a report naming both ports, and 4..20 succeed.
func TestPortForwardResetFault(t *testing.T) {
	app := startPFApp(t, hashApp)
	for _, tc := range pfCases {
		t.Run(tc.name, func(t *testing.T) {
			skipWithoutSPDY(t, tc)
			_, src := startStreamServer(t, streamserver.ProfileFull, "reset-forward-conn=3")
			var urls atomic.Int64
			counted := func(ctx context.Context, ports []uint16) (string, error) { urls.Add(1); return src(ctx, ports) }
			var report lockedBuffer
			f := newTestForwarder(t, counted, tc.offer, &report)
			srv := serveLocal(t, f, app.port)
			for i := 1; i <= 20; i++ {
				// crisp resets the local connection it cannot forward, which
				// can come before the dialer has seen its connect complete:
				// then connection 3 fails at the dial.
				c, err := net.Dial("tcp", srv.addr)
				if err == nil {
					err = roundTrip(c, uint64(i), 32<<10)
					_ = c.Close()
				}
				if i == 3 && err == nil {
					t.Errorf("connection 3 succeeded despite the fault")
				}
				if i != 3 && err != nil {
					t.Errorf("connection %d: %v", i, err)
				}
			}
			if err := srv.stop(); err != nil {
				t.Errorf("Serve: %v", err)
			}
			out := report.String()
			want := fmt.Sprintf("%s -> %d: connection 3 failed", srv.addr, app.port)
			if !strings.Contains(out, want) || !strings.Contains(out, "reset-forward-conn") {
				t.Errorf("report %q lacks %q and the runtime's message", out, want)
			}
			if n := strings.Count(out, "failed"); n != 1 {
				t.Errorf("%d failures reported, want 1:\n%s", n, out)
			}
			// SPDY: the failed connection's session is retired, the 4th
			// connection opens a fresh one (containerd 1.6 stalls later
			// connections on the old one). WebSocket: one URL per connection.
			wantURLs := int64(2)
			if tc.offer.Protocols[0] == transport.PortForwardWebSocket || tc.offer.Protocols[0] == transport.PortForwardWebSocketBase64 {
				wantURLs = 21 // the portless check at negotiation, then one per connection
			}
			if got := urls.Load(); got != wantURLs {
				t.Errorf("used %d URLs, want %d", got, wantURLs)
			}
		})
	}
}

// TestPortForwardNothingListening: a refused remote port fails that
// connection with the runtime's message; the next one works.
func TestPortForwardNothingListening(t *testing.T) {
	app := startPFApp(t, hashApp)
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadPort := uint16(dead.Addr().(*net.TCPAddr).Port)
	_ = dead.Close()
	_, src := startStreamServer(t, streamserver.ProfileFull)
	for _, tc := range pfCases {
		t.Run(tc.name, func(t *testing.T) {
			skipWithoutSPDY(t, tc)
			f := newTestForwarder(t, src, tc.offer, nil)
			ctx := context.Background()
			// The failure shows in Dial or in the first Read, depending on
			// how fast the runtime gives up.
			fc, err := f.Dial(ctx, deadPort)
			if err == nil {
				if _, err = io.ReadAll(fc); err == nil {
					err = fc.RemoteError()
				}
				_ = fc.Close()
			}
			var re *RemoteError
			if !errors.As(err, &re) || re.Port != deadPort || !strings.Contains(re.Message, "refused") {
				t.Errorf("reading from a dead port: got %v, want the runtime's connection-refused message", err)
			}
			fc, err = f.Dial(ctx, app.port)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = fc.Close() }()
			if err := roundTrip(fc, 1, 1000); err != nil {
				t.Errorf("the next connection: %v", err)
			}
		})
	}
}

// TestPortForwardStreamServerRestart: the runtime's streaming server dies
// and comes back; new connections succeed (SPDY sessions re-established).
func TestPortForwardStreamServerRestart(t *testing.T) {
	app := startPFApp(t, hashApp)
	for _, tc := range pfCases {
		t.Run(tc.name, func(t *testing.T) {
			skipWithoutSPDY(t, tc)
			srv, src := startStreamServer(t, streamserver.ProfileFull)
			f := newTestForwarder(t, src, tc.offer, nil)
			ctx := context.Background()
			check := func(when string) {
				t.Helper()
				fc, err := f.Dial(ctx, app.port)
				if err != nil {
					t.Fatalf("%s: %v", when, err)
				}
				defer func() { _ = fc.Close() }()
				if err := roundTrip(fc, 3, 4096); err != nil {
					t.Errorf("%s: %v", when, err)
				}
			}
			check("before the restart")
			// A connection open while the server dies ends with an error.
			open, err := f.Dial(ctx, app.port)
			if err != nil {
				t.Fatal(err)
			}
			if err := srv.Stop(); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadAll(open); err == nil && tc.offer.Transport == transport.SPDY {
				t.Log("the open connection ended without an error (the server closed it cleanly)")
			}
			_ = open.Close()
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			check("after the restart")
			check("again")
		})
	}
}

// TestPortForwardHalfClose: a client that shuts its write side still
// receives the whole reply, on the protocols that carry a half-close.
func TestPortForwardHalfClose(t *testing.T) {
	app := startPFApp(t, halfCloseApp)
	_, src := startStreamServer(t, streamserver.ProfileFull)
	payload := strings.Repeat("half-close ", 10000)
	want := sha256.Sum256([]byte(payload))
	wantTail := sha256.New()
	_, _ = io.CopyN(wantTail, pfPattern(7), 256<<10)
	for _, tc := range pfCases[:2] {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestForwarder(t, src, tc.offer, nil)
			srv := serveLocal(t, f, app.port)
			defer func() {
				if err := srv.stop(); err != nil {
					t.Error(err)
				}
			}()

			c, err := net.Dial("tcp", srv.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.Close() }()
			if _, err := io.WriteString(c, payload); err != nil {
				t.Fatal(err)
			}
			if err := c.(*net.TCPConn).CloseWrite(); err != nil {
				t.Fatal(err)
			}
			reply, err := io.ReadAll(c)
			if err != nil {
				t.Fatal(err)
			}
			if len(reply) != 32+256<<10 {
				t.Fatalf("reply is %d bytes, want %d", len(reply), 32+256<<10)
			}
			if string(reply[:32]) != string(want[:]) {
				t.Error("the app received something other than what was sent")
			}
			if got := sha256.Sum256(reply[32:]); string(got[:]) != string(wantTail.Sum(nil)) {
				t.Error("the reply's tail differs")
			}
		})
	}
	t.Run("websocket-v4", func(t *testing.T) {
		f := newTestForwarder(t, src, pfCases[2].offer, nil)
		fc, err := f.Dial(context.Background(), app.port)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = fc.Close() }()
		if err := fc.CloseWrite(); !errors.Is(err, ErrHalfCloseUnsupported) {
			t.Errorf("CloseWrite on WebSocket v4: got %v, want ErrHalfCloseUnsupported", err)
		}
	})
}

// TestPortForwardNegotiation: auto falls back in the catalogue's order with a
// fresh URL each time, and a refusal of everything names every attempt.
func TestPortForwardNegotiation(t *testing.T) {
	app := startPFApp(t, hashApp)
	for _, tc := range []struct {
		profile   streamserver.Profile
		transport transport.Transport
		want      string // chosen subprotocol, or "" for failure
		attempts  int
	}{
		{streamserver.ProfileFull, transport.Auto, transport.PortForwardSPDY, 1},
		{streamserver.ProfileFull, transport.WebSocket, transport.PortForwardTunnel, 1},
		{streamserver.ProfileCRIStreaming, transport.WebSocket, transport.PortForwardWebSocket, 2},
		{streamserver.ProfileConmonRS, transport.Auto, transport.PortForwardTunnel, 2},
		{streamserver.ProfileLegacy, transport.Auto, transport.PortForwardSPDY, 1},
		{streamserver.ProfileLegacy, transport.WebSocket, "", 2},
		{streamserver.ProfileConmonRS, transport.SPDY, "", 1},
	} {
		t.Run(fmt.Sprintf("%s-%s", tc.profile, tc.transport), func(t *testing.T) {
			_, src := startStreamServer(t, tc.profile)
			urls := 0
			counted := func(ctx context.Context, ports []uint16) (string, error) { urls++; return src(ctx, ports) }
			f, err := NewForwarder(ForwarderOptions{Source: counted, Transport: tc.transport})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = f.Close() }()
			offer, err := f.Negotiate(context.Background())
			if tc.want == "" {
				var ne *transport.NegotiationError
				if !errors.As(err, &ne) || !strings.Contains(err.Error(), "403") || len(ne.Attempts) != tc.attempts {
					t.Fatalf("got %v, want a negotiation error naming the %d refusal(s)", err, tc.attempts)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if offer.Protocols[0] != tc.want {
				t.Errorf("chose %v, want %s", offer, tc.want)
			}
			if urls != tc.attempts {
				t.Errorf("used %d URLs, want %d (one per handshake)", urls, tc.attempts)
			}
			if tc.want == transport.PortForwardWebSocket {
				// Negotiation checked the direct protocol with a handshake
				// naming no port; the first connection is the real thing.
				fc, err := f.Dial(context.Background(), app.port)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = fc.Close() }()
				if err := roundTrip(fc, 5, 100); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestConnectPortForwardRecord: one handshake, its record (status,
// protocol, latency) for probes, and a refusal's status and reason.
func TestConnectPortForwardRecord(t *testing.T) {
	app := startPFApp(t, hashApp)
	_, src := startStreamServer(t, streamserver.ProfileCRIStreaming)
	ctx := context.Background()
	for _, tc := range pfCases {
		t.Run(tc.name, func(t *testing.T) {
			u, err := src(ctx, []uint16{app.port})
			if err != nil {
				t.Fatal(err)
			}
			sess, att, err := Connect(ctx, u, tc.offer, []uint16{app.port}, transport.Config{})
			if tc.name == "tunnel" {
				var refused *transport.RefusedError
				if !errors.As(err, &refused) || att.Status != 403 || att.Accepted() || att.Reason == "" {
					t.Fatalf("tunnel on cri-streaming: got %v (status %d, reason %q), want a 403 refusal", err, att.Status, att.Reason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = sess.Close() }()
			if !att.Accepted() || att.Status != 101 || att.Protocol != tc.offer.Protocols[0] || att.Upgrade <= 0 {
				t.Errorf("record %+v: want accepted, 101, %s, a latency", att, tc.offer.Protocols[0])
			}
			fc, err := sess.Open(ctx, app.port)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = fc.Close() }()
			if err := roundTrip(fc, 9, 10000); err != nil {
				t.Error(err)
			}
		})
	}
	t.Run("used-token", func(t *testing.T) {
		u, err := src(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		sess, _, err := Connect(ctx, u, pfCases[0].offer, nil, transport.Config{})
		if err != nil {
			t.Fatal(err)
		}
		_ = sess.Close()
		_, att, err := Connect(ctx, u, pfCases[0].offer, nil, transport.Config{})
		if err == nil || att.Status != 404 {
			t.Errorf("a used URL: got %v, status %d; want a 404 refusal", err, att.Status)
		}
	})
}

// TestPortForwardTLS: every protocol over https/wss with the runtime's CA
// and a client certificate (mTLS); without the CA the error says what to do.
func TestPortForwardTLS(t *testing.T) {
	app := startPFApp(t, hashApp)
	dir := t.TempDir()
	serverTLS, err := certs.Generate(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	_, src := startStreamServerTLS(t, serverTLS, streamserver.ProfileFull)
	caPEM, err := os.ReadFile(filepath.Join(dir, certs.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, certs.ClientCertFile), filepath.Join(dir, certs.ClientKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	clientTLS := &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	for _, tc := range pfCases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := NewForwarder(ForwarderOptions{Source: src, Offers: []transport.Offer{tc.offer}, Config: transport.Config{TLS: clientTLS}})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = f.Close() }()
			fc, err := f.Dial(context.Background(), app.port)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = fc.Close() }()
			if err := roundTrip(fc, 11, 100<<10); err != nil {
				t.Error(err)
			}
		})
	}
	t.Run("unknown-authority", func(t *testing.T) {
		f, err := NewForwarder(ForwarderOptions{Source: src, Transport: transport.Auto, Config: transport.Config{TLS: &tls.Config{MinVersion: tls.VersionTLS12}}})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = f.Close() }()
		_, err = f.Negotiate(context.Background())
		if err == nil || !strings.Contains(err.Error(), "--tls-ca") {
			t.Errorf("got %v, want an error that points at --tls-ca", err)
		}
	})
}
