package remotecommand

import (
	"io"
	"strconv"
	"testing"

	"github.com/crisp-cri/crisp/internal/transport"
)

// BenchmarkStreamStdout is the client side of exec stdout throughput, in
// process, against cri-streaming's own server (SPDY v4 and WebSocket v4, as
// containerd and CRI-O speak them): 64 MiB per session, to io.Discard.
func BenchmarkStreamStdout(b *testing.B) {
	const size = 64 << 20
	for _, tr := range []transport.Transport{transport.SPDY, transport.WebSocket} {
		b.Run(string(tr), func(b *testing.B) {
			f := newFakeServer(b, criSPDY, criWS)
			offers := []transport.Offer{{Transport: tr, Protocols: []string{transport.ExecProtocolV4}}}
			b.SetBytes(size)
			for b.Loop() {
				if _, err := f.stream(offers, transport.Config{}, Streams{Stdout: io.Discard}, "zeros", strconv.Itoa(size)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStreamTrue is one exec session of a command that does nothing:
// dial, upgrade, stream setup, exit status; no process start, no CRI call.
func BenchmarkStreamTrue(b *testing.B) {
	for _, tr := range []transport.Transport{transport.SPDY, transport.WebSocket} {
		b.Run(string(tr), func(b *testing.B) {
			f := newFakeServer(b, criSPDY, criWS)
			offers := []transport.Offer{{Transport: tr, Protocols: []string{transport.ExecProtocolV4}}}
			for b.Loop() {
				if _, err := f.stream(offers, transport.Config{}, Streams{Stdout: io.Discard}, "exit", "0"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
