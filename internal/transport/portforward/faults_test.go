package portforward

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/transport"
)

// pfFaultBound is how long any step of the fault table may take: far past
// every timeout in play, far short of a hang.
const pfFaultBound = 20 * time.Second

// faultFwd is a forward against a streaming server with one fault.
type faultFwd struct {
	addr   string
	report *lockedBuffer
	served chan error
	cancel context.CancelFunc
}

// faultForward serves one listener through a forwarder pinned to offer
// (request timeout 500ms) against a streaming server with fault.
func faultForward(t *testing.T, app *pfApp, offer transport.Offer, fault string) *faultFwd {
	t.Helper()
	_, src := startStreamServer(t, streamserver.ProfileFull, fault)
	ff := &faultFwd{report: &lockedBuffer{}, served: make(chan error, 1)}
	f, err := NewForwarder(ForwarderOptions{Source: src, Offers: []transport.Offer{offer}, Report: ff.report.Printf,
		Config: transport.Config{UpgradeTimeout: 500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	ls, err := ListenLocal([]string{"127.0.0.1"}, []PortMapping{{Remote: app.port}})
	if err != nil {
		t.Fatal(err)
	}
	ff.addr = ls[0].Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	ff.cancel = cancel
	t.Cleanup(cancel)
	go func() { ff.served <- f.ServeAll(ctx, ls, nil) }()
	return ff
}

// wait returns ServeAll's error once it ends by itself, within pfFaultBound.
func (ff *faultFwd) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-ff.served:
		return err
	case <-time.After(pfFaultBound):
		ff.cancel()
		t.Fatalf("ServeAll still running after %v", pfFaultBound)
		return nil
	}
}

// stop ends ServeAll as SIGINT does and returns its error.
func (ff *faultFwd) stop(t *testing.T) error {
	t.Helper()
	ff.cancel()
	return ff.wait(t)
}

// faultConn runs one bounded connection of the app protocol.
func faultConn(addr string, seed uint64, size int64) error {
	c, err := net.DialTimeout("tcp", addr, pfFaultBound)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(pfFaultBound))
	err = roundTrip(c, seed, size)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return errHung
	}
	return err
}

var errHung = errors.New("hung until the test's deadline")

// TestPortForwardFaults runs every fault of the mock's streaming server
// against every port-forward protocol: nothing hangs, a fault at the
// handshake fails the forward with the reason (the command exits 1), and a
// fault under a connection fails that connection with a report while later
// connections work (the command carries on, and exits 0 on SIGINT).
func TestPortForwardFaults(t *testing.T) {
	app := startPFApp(t, hashApp)
	for _, tc := range pfCases {
		t.Run(tc.name, func(t *testing.T) {
			skipWithoutSPDY(t, tc)
			t.Run("refuse-upgrade", func(t *testing.T) {
				err := faultForward(t, app, tc.offer, "refuse-upgrade").wait(t)
				var neg *transport.NegotiationError
				if !errors.As(err, &neg) || !strings.Contains(err.Error(), "refuse-upgrade") {
					t.Errorf("ServeAll: %v, want a refusal naming the fault", err)
				}
			})
			t.Run("delay", func(t *testing.T) {
				start := time.Now()
				// ServeAll ends by itself: the handshake timed out.
				err := faultForward(t, app, tc.offer, "delay=30s").wait(t)
				if !errors.Is(err, ErrUpgradeTimeout) || !strings.Contains(err.Error(), "--request-timeout") {
					t.Errorf("ServeAll: %v, want the upgrade timeout naming --request-timeout", err)
				}
				if took := time.Since(start); took > 5*time.Second {
					t.Errorf("ServeAll took %v with a 500ms request timeout", took)
				}
			})
			t.Run("drop-after", func(t *testing.T) {
				ff := faultForward(t, app, tc.offer, "drop-after=65536")
				if err := faultConn(ff.addr, 1, 1<<20); err == nil || errors.Is(err, errHung) {
					t.Errorf("1 MiB through a connection dropped after 64 KiB: %v, want a prompt failure", err)
				} else {
					t.Logf("dropped: %v", err)
				}
				if err := faultConn(ff.addr, 2, 1<<10); err != nil {
					t.Errorf("the next connection (1 KiB): %v", err)
				}
				if err := ff.stop(t); err != nil {
					t.Errorf("ServeAll: %v", err)
				}
				if !strings.Contains(ff.report.String(), "connection 1 failed") {
					t.Errorf("no report of the dropped connection:\n%s", ff.report)
				}
			})
			t.Run("reset-forward-conn", func(t *testing.T) {
				ff := faultForward(t, app, tc.offer, "reset-forward-conn=1")
				if err := faultConn(ff.addr, 1, 32<<10); err == nil || errors.Is(err, errHung) {
					t.Errorf("the reset connection: %v, want a prompt failure", err)
				}
				if err := faultConn(ff.addr, 2, 32<<10); err != nil {
					t.Errorf("the next connection: %v", err)
				}
				if err := ff.stop(t); err != nil {
					t.Errorf("ServeAll: %v", err)
				}
				if out := ff.report.String(); !strings.Contains(out, "connection 1 failed") || !strings.Contains(out, "reset-forward-conn") {
					t.Errorf("no report of the reset connection with the runtime's reason:\n%s", out)
				}
			})
			t.Run("kill-stream-server-after", func(t *testing.T) {
				// SPDY and the tunnel too: a stream being opened as the
				// server dies fails with the connection (spdyconn), where
				// spdystream waited out a 30s reply timeout.
				ff := faultForward(t, app, tc.offer, "kill-stream-server-after=300ms")
				// Connections until one fails once the server is gone; none
				// may hang.
				failed := false
				for i := uint64(1); i <= 200 && !failed; i++ {
					err := faultConn(ff.addr, i, 256<<10)
					if errors.Is(err, errHung) {
						t.Fatalf("connection %d: %v", i, err)
					}
					failed = err != nil
				}
				if !failed {
					t.Fatal("200 connections went through a streaming server killed after 300ms")
				}
				if err := ff.stop(t); err != nil {
					t.Errorf("ServeAll: %v", err)
				}
				if !strings.Contains(ff.report.String(), "failed") {
					t.Errorf("no report of the failed connection:\n%s", ff.report)
				}
			})
		})
	}
}
