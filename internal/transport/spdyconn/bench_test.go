package spdyconn

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"

	"k8s.io/streaming/pkg/httpstream"
	streamspdy "k8s.io/streaming/pkg/httpstream/spdy"
)

// BenchmarkReceive moves 64 MiB from a spdystream server (as the CRI
// streaming servers run it) to io.Discard, in the frame sizes containerd
// was seen sending (4 KiB: most of its frames; 32 KiB: cri-streaming's),
// through this package and, for comparison, through spdystream's client
// (what crisp ran before, and crictl runs). Client and server share the
// process: compare the two, not the absolute figures.
func BenchmarkReceive(b *testing.B) {
	const total = 64 << 20
	for _, frame := range []int{4 << 10, 32 << 10} {
		for _, client := range []struct {
			name string
			dial func(net.Conn) (httpstream.Connection, error)
		}{
			{"spdyconn", func(nc net.Conn) (httpstream.Connection, error) { return New(nc, nil, 0) }},
			{"spdystream", streamspdy.NewClientConnection},
		} {
			b.Run(client.name+"/frame="+sizeName(frame), func(b *testing.B) {
				b.SetBytes(total)
				b.ReportAllocs()
				for b.Loop() {
					receiveOnce(b, client.dial, frame, total)
				}
			})
		}
	}
}

func sizeName(n int) string { return strconv.Itoa(n>>10) + "KiB" }

func receiveOnce(b *testing.B, dial func(net.Conn) (httpstream.Connection, error), frame, total int) {
	b.Helper()
	chunk := make([]byte, frame)
	client, _ := serveWith(b, func(s httpstream.Stream) {
		for sent := 0; sent < total; sent += frame {
			if _, err := s.Write(chunk); err != nil {
				return
			}
		}
		_ = s.Close()
	}, dial)
	s, err := client.CreateStream(http.Header{})
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, s)
	if err != nil || n != int64(total) {
		b.Fatalf("received %d bytes, %v; want %d", n, err, total)
	}
	_ = client.Close()
}
