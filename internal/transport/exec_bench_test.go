package transport

import (
	"io"
	"strconv"
	"testing"
)

// BenchmarkStreamStdout is the client side of exec stdout throughput, in
// process, against cri-streaming's own server (SPDY v4 and WebSocket v4, as
// containerd and CRI-O speak them): 64 MiB per session, to io.Discard.
func BenchmarkStreamStdout(b *testing.B) {
	const size = 64 << 20
	for _, transport := range []Transport{SPDY, WebSocket} {
		b.Run(string(transport), func(b *testing.B) {
			f := newFakeServer(b, criSPDY, criWS)
			offers := []Offer{{transport, []string{ExecProtocolV4}}}
			b.SetBytes(size)
			for b.Loop() {
				if _, err := f.stream(offers, Config{}, Streams{Stdout: io.Discard}, "zero", strconv.Itoa(size)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStreamTrue is one exec session of a command that does nothing:
// dial, upgrade, stream setup, exit status; no process start, no CRI call.
func BenchmarkStreamTrue(b *testing.B) {
	for _, transport := range []Transport{SPDY, WebSocket} {
		b.Run(string(transport), func(b *testing.B) {
			f := newFakeServer(b, criSPDY, criWS)
			offers := []Offer{{transport, []string{ExecProtocolV4}}}
			for b.Loop() {
				if _, err := f.stream(offers, Config{}, Streams{Stdout: io.Discard}, "exit", "0"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
