package remotecommand

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/streaming/pkg/httpstream"
	streamspdy "k8s.io/streaming/pkg/httpstream/spdy"

	"github.com/crisp-cri/crisp/internal/transport"
)

// spdyV1Server speaks SPDY channel.k8s.io as a v1 server that keeps its
// error stream open: it writes "out" on stdout, ends stdout and stderr, and
// only then sends text (when not empty) on the error stream, the order in
// which client-go's v1 handler used to lose it.
func spdyV1Server(t *testing.T, text string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if _, err := httpstream.Handshake(req, w, []string{transport.ExecProtocolV1}); err != nil {
			return
		}
		streams := make(chan httpstream.Stream, 4)
		conn := streamspdy.NewResponseUpgrader().UpgradeResponse(w, req, func(s httpstream.Stream, _ <-chan struct{}) error {
			streams <- s
			return nil
		})
		if conn == nil {
			return
		}
		defer func() { _ = conn.Close() }() // a test connection: nothing to report
		byType := map[string]httpstream.Stream{}
		for len(byType) < 3 {
			select {
			case s := <-streams:
				byType[s.Headers().Get("streamType")] = s
			case <-conn.CloseChan():
				return
			}
		}
		_, _ = io.WriteString(byType["stdout"], "out\n")
		_ = byType["stdout"].Close()
		_ = byType["stderr"].Close()
		if text != "" {
			_, _ = io.WriteString(byType["error"], text)
		}
		_ = byType["error"].Close()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The error text of SPDY v1 arrives after stdout and stderr end: crisp
// waits for it and turns it into the exit status.
func TestSPDYV1ErrorTextAfterOutput(t *testing.T) {
	for _, tt := range []struct {
		text string
		want int // -1: success
	}{
		{"command terminated with non-zero exit code: exit status 7", 7},
		{"executable file not found", transport.ExitNotFound}, // a command that never started: 127, as docker says
		{"", -1},
	} {
		srv := spdyV1Server(t, tt.text)
		for range 20 {
			var out bytes.Buffer
			s := Streams{Stdout: &out, Stderr: io.Discard}
			_, err := Try(context.Background(), "exec", srv.URL+"/exec/x", transport.Offer{Transport: transport.SPDY, Protocols: []string{transport.ExecProtocolV1}}, transport.Config{}, s)
			checkExit(t, tt.text, err, tt.want)
			if out.String() != "out\n" {
				t.Fatalf("stdout %q, want %q", out.String(), "out\n")
			}
		}
	}
}

// WebSocket channel.k8s.io (cri-streaming's server, which sends the text
// just before every channel ends at once): the text is never lost.
func TestWebSocketV1ExitText(t *testing.T) {
	f := newFakeServer(t, nil, []string{transport.ExecProtocolV1})
	offer := transport.Offer{Transport: transport.WebSocket, Protocols: []string{transport.ExecProtocolV1}}
	for range 50 {
		for _, code := range []string{"7", "0"} {
			var out bytes.Buffer
			s := Streams{Stdout: &out, Stderr: io.Discard}
			u, _ := f.source(s, "exit", code)(context.Background())
			att, err := Try(context.Background(), "exec", u, offer, transport.Config{}, s)
			if att.Protocol != transport.ExecProtocolV1 {
				t.Fatalf("negotiated %q, want %s", att.Protocol, transport.ExecProtocolV1)
			}
			want := 7
			if code == "0" {
				want = -1
			}
			checkExit(t, "exit "+code, err, want)
		}
		var out bytes.Buffer
		s := Streams{Stdout: &out, Stderr: io.Discard}
		u, _ := f.source(s, "echo", "hi")(context.Background())
		if _, err := Try(context.Background(), "exec", u, offer, transport.Config{}, s); err != nil || out.String() != "hi\n" {
			t.Fatalf("echo hi: %q, %v", out.String(), err)
		}
	}
}

func checkExit(t *testing.T, what string, err error, want int) {
	t.Helper()
	if want < 0 {
		if err != nil {
			t.Fatalf("%s: %v, want success", what, err)
		}
		return
	}
	var coded interface{ ExitStatus() int }
	if !errors.As(err, &coded) || coded.ExitStatus() != want {
		t.Fatalf("%s: err = %v (%T), want exit status %d", what, err, err, want)
	}
	if !strings.Contains(err.Error(), "exit") && !strings.Contains(err.Error(), "not found") {
		t.Fatalf("%s: err = %q does not show the server's text", what, err)
	}
}
