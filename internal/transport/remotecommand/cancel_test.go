package remotecommand

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/transport"
)

// A signal while the upgrade is pending (the server took the connection
// and does not answer) ends the attempt at once, long before the upgrade
// timeout: the handshake's read does not watch the context by itself.
func TestCancelDuringPendingUpgrade(t *testing.T) {
	offers := map[string]transport.Offer{
		"spdy":      {Transport: transport.SPDY, Protocols: criSPDY},
		"websocket": {Transport: transport.WebSocket, Protocols: criWS},
		"base64":    {Transport: transport.WebSocket, Protocols: []string{transport.ExecProtocolBase64}},
	}
	for name, offer := range offers {
		t.Run(name, func(t *testing.T) {
			f := newFakeServer(t, criSPDY, criWS)
			f.hang = make(chan struct{})
			f.arrived = make(chan struct{}, 8)
			t.Cleanup(func() { close(f.hang) })
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cfg := transport.Config{UpgradeTimeout: time.Minute}
			done := make(chan error, 1)
			go func() {
				_, err := Stream(ctx, "exec", f.source(Streams{Stdout: io.Discard}, "echo"), []transport.Offer{offer}, cfg, Streams{Stdout: io.Discard})
				done <- err
			}()
			f.waitRequest(t)
			start := time.Now()
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("err = %v, want context.Canceled", err)
				}
				if d := time.Since(start); d > time.Second {
					t.Errorf("returned %s after the cancel", d)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Stream still waiting for the upgrade 10s after the cancel")
			}
		})
	}
}

// waitRequest waits until the server holds a request without answering.
func (f *fakeServer) waitRequest(t *testing.T) {
	t.Helper()
	select {
	case <-f.arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("no upgrade request reached the server in 10s")
	}
}

// A runtime that hands back a huge streaming URL gets it cut in every
// message, whatever becomes of the attempt.
func TestLongURLIsCutInMessages(t *testing.T) {
	f := newFakeServer(t, criSPDY, criWS)
	tail := "/exec/" + strings.Repeat("x", 2<<20)
	for name, base := range map[string]string{"refused": f.srv.URL, "unreachable": "http://127.0.0.1:1", "unusable": "ftp://127.0.0.1:1"} {
		for _, tr := range []transport.Transport{transport.SPDY, transport.WebSocket} {
			t.Run(name+"/"+string(tr), func(t *testing.T) {
				offers, _ := transport.ExecOffers(tr, "")
				src := func(context.Context) (string, error) { return base + tail, nil }
				var log strings.Builder
				cfg := transport.Config{UpgradeTimeout: 5 * time.Second, Logf: func(format string, args ...any) { fmt.Fprintf(&log, format+"\n", args...) }}
				_, err := Stream(context.Background(), "exec", src, offers, cfg, Streams{Stdout: io.Discard})
				if err == nil {
					t.Fatal("no error")
				}
				if n := len(err.Error()); n > 2000 {
					t.Errorf("the error is %d bytes: %.300s", n, err)
				}
				if n := log.Len(); n > 4000 {
					t.Errorf("the -v log is %d bytes", n)
				}
			})
		}
	}
}
