package portforward

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/transport/liveness"
)

// A runtime that vanishes mid-connection (its packets dropped both ways)
// or freezes (nothing read or sent, the connection held open) ends the
// forwarded connection on every transport, with the dead-peer error,
// instead of holding it for good (SPDY) or for TCP keepalive's ~150 s
// (WebSocket).
func TestDeadPeerEndsForwardedConnection(t *testing.T) {
	offers, err := transport.PortForwardOffers(transport.Auto)
	if err != nil {
		t.Fatal(err)
	}
	app := startPFApp(t, func(c net.Conn) {
		_, _ = c.Write([]byte("hello\n"))
		_, _ = io.Copy(io.Discard, c) // then silent until the end
	})
	for _, tc := range []struct {
		name string
		mode testkit.ProxyMode
	}{{"vanished", testkit.ProxySwallow}, {"frozen", testkit.ProxyFreeze}} {
		for _, offer := range offers {
			t.Run(tc.name+"/"+pfOfferName(offer), func(t *testing.T) {
				srv, src := startStreamServer(t, "full")
				proxy := testkit.NewProxy(t, srv.Addr())
				viaProxy := func(ctx context.Context, ports []uint16) (string, error) {
					u, err := src(ctx, ports)
					return strings.Replace(u, srv.Addr(), proxy.Addr(), 1), err
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
				proxy.Set(tc.mode)
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
					t.Fatalf("the forwarded connection hung after the runtime %s", tc.name)
				}
			})
		}
	}
}
