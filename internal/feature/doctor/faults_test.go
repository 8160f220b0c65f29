package doctor

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
)

// The mock's kill-stream-server-after fault (what `crisp mock-runtime
// --fault` injects), not a test stopping the server by hand: the runtime's
// gRPC still answers and hands out a URL, nothing listens at it, and the
// walk stops at hop tcp with the cause and CRI-O's keys, naming the port
// the dead server had.
func TestKilledStreamingServerFailsAtTCPWithCRIOKeys(t *testing.T) {
	kill, err := streamserver.ParseFault("kill-stream-server-after=0s")
	if err != nil {
		t.Fatal(err)
	}
	fx := newFixture(t, mockruntime.Config{Faults: []streamserver.Fault{kill}, Quirks: mockruntime.Quirks{RuntimeName: "cri-o"}}, mocktest.ContainerSpec{})
	addr := fx.env.Runtime.StreamServer().Addr()
	waitRefused(t, addr)
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}

	hops := fx.w.walk(context.Background())
	if got, want := names(hops), "runtime=pass runtime-ready=pass target=pass exec-rpc=pass tcp=fail"; got != want {
		t.Fatalf("hops\n got %s\nwant %s", got, want)
	}
	contains(t, "exec-rpc", hops[3].Detail, "host "+host, "port "+port)
	h := failedAt(t, hops, HopTCP)
	if h.Signature != sigRefused {
		t.Errorf("signature %q, want %q (error %q)", h.Signature, sigRefused, h.Error)
	}
	contains(t, "error", h.Error, "connection refused")
	contains(t, "tried", h.Tried, "TCP connect to "+addr)
	contains(t, "cause", h.Cause, "(CRI-O) handed out a URL at "+addr, "nothing accepts connections there", "streaming server is down")
	contains(t, "fix", h.Fix, "stream_address (now "+host+")", "stream_port (now "+port+")", "[crio.api]", "restart crio")
}

// waitRefused waits (bounded) until nothing accepts connections at addr:
// the fault's timer runs on its own goroutine.
func waitRefused(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return
		}
		_ = c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("the streaming server at %s still accepts connections 10s after kill-stream-server-after=0s", addr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
