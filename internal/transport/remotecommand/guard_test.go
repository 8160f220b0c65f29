package remotecommand

import (
	"context"
	"errors"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/transport"
)

// Piped stdin on WebSocket v4, which cannot pass stdin's end: `cat` would
// wait forever, so the session fails at once, saying why and what to use.
func TestPipedStdinOnWebSocketV4FailsFast(t *testing.T) {
	f := newFakeServer(t, nil, criWS)
	offers, _ := transport.ExecOffers(transport.WebSocket, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	streams := Streams{Stdin: strings.NewReader("a\n"), Stdout: io.Discard}
	_, err := Stream(ctx, "exec", f.source(streams, "cat"), offers, transport.Config{}, streams)
	if ctx.Err() != nil {
		t.Fatal("the session hung until the test's deadline")
	}
	if err == nil || !strings.Contains(err.Error(), "cannot pass the end of stdin") || !strings.Contains(err.Error(), "--transport spdy") {
		t.Fatalf("err = %v, want the stdin-EOF refusal naming --transport spdy", err)
	}
	var coded interface{ ExitStatus() int }
	if errors.As(err, &coded) {
		t.Errorf("the refusal carries exit status %d: it would pass for the remote command's", coded.ExitStatus())
	}
}

// fullWriter is /dev/full: every write fails.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// A local write error (crisp's stdout on a full disk) is crisp's failure,
// on every transport, never a silent success.
func TestLocalWriteErrorIsAnError(t *testing.T) {
	for _, tr := range []transport.Transport{transport.SPDY, transport.WebSocket} {
		t.Run(string(tr), func(t *testing.T) {
			f := newFakeServer(t, criSPDY, append([]string{transport.ExecProtocolV5}, criWS...))
			offers, _ := transport.ExecOffers(tr, "")
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			streams := Streams{Stdout: fullWriter{}, Stderr: io.Discard}
			_, err := Stream(ctx, "exec", f.source(streams, "zeros", "1000000"), offers, transport.Config{}, streams)
			if ctx.Err() != nil {
				t.Fatal("the session hung until the test's deadline")
			}
			if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "stdout") {
				t.Fatalf("err = %v, want the local stdout write error", err)
			}
		})
	}
}

// Piped stdin on SPDY channel.k8s.io, whose stdin stream is never
// half-closed: fails at once with the hint, as WebSocket v4 does, instead of
// hanging on `cat`.
func TestPipedStdinOnSPDYV1FailsFast(t *testing.T) {
	f := newFakeServer(t, []string{transport.ExecProtocolV1}, nil)
	offers, err := transport.ExecOffers(transport.SPDY, transport.ExecProtocolV1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	streams := Streams{Stdin: strings.NewReader("a\n"), Stdout: io.Discard}
	_, err = Stream(ctx, "exec", f.source(streams, "cat"), offers, transport.Config{}, streams)
	if ctx.Err() != nil {
		t.Fatal("the session hung until the test's deadline")
	}
	if err == nil || !strings.Contains(err.Error(), "cannot pass the end of stdin") || !strings.Contains(err.Error(), "--protocol") {
		t.Fatalf("err = %v, want the stdin-EOF refusal naming --protocol", err)
	}
	var coded interface{ ExitStatus() int }
	if errors.As(err, &coded) {
		t.Errorf("the refusal carries exit status %d: it would pass for the remote command's", coded.ExitStatus())
	}
}

// The stdin-EOF refusals name the versions that can pass stdin's end as
// the catalogue lists them, so a new version shows up in them.
func TestStdinEOFErrorNamesTheCatalogue(t *testing.T) {
	v6 := "v6.channel.k8s.io"
	caps := transport.Capabilities{ExitCode: true, StdinEOF: true, Resize: true}
	remove := transport.AddForTest(
		transport.Spec{Protocol: transport.Protocol{Transport: transport.SPDY, Name: v6}, Calls: []transport.Call{transport.CallExec, transport.CallAttach}, Version: 6, Framing: transport.FramingSPDY, Caps: caps},
		transport.Spec{Protocol: transport.Protocol{Transport: transport.WebSocket, Name: v6}, Calls: []transport.Call{transport.CallExec, transport.CallAttach}, Version: 6, Framing: transport.FramingBinary, Caps: caps})
	defer remove()
	spdy := stdinEOFError("exec", transport.Offer{Transport: transport.SPDY}, transport.ExecProtocolV1).Error()
	if !strings.Contains(spdy, "SPDY "+transport.ExecProtocolV2+" to "+v6+" pass it") {
		t.Errorf("SPDY refusal: %s", spdy)
	}
	ws := stdinEOFError("exec", transport.Offer{Transport: transport.WebSocket}, transport.ExecProtocolV4).Error()
	if !strings.Contains(ws, "speaks WebSocket "+v6+" or "+transport.ExecProtocolV5+",") {
		t.Errorf("WebSocket refusal: %s", ws)
	}
}
