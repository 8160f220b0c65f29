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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = ln.Close() }() // one connection
	served := make(chan httpstream.Connection, 1)
	go func() {
		sc, err := ln.Accept()
		if err != nil {
			close(served)
			return
		}
		chunk := make([]byte, frame)
		conn, err := streamspdy.NewServerConnection(sc, func(s httpstream.Stream, replySent <-chan struct{}) error {
			go func() {
				<-replySent
				for sent := 0; sent < total; sent += frame {
					if _, err := s.Write(chunk); err != nil {
						return
					}
				}
				_ = s.Close()
			}()
			return nil
		})
		if err != nil {
			close(served)
			return
		}
		served <- conn
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	client, err := dial(nc)
	if err != nil {
		b.Fatal(err)
	}
	server := <-served
	s, err := client.CreateStream(http.Header{})
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, s)
	if err != nil || n != int64(total) {
		b.Fatalf("received %d bytes, %v; want %d", n, err, total)
	}
	_ = client.Close()
	if server != nil {
		_ = server.Close()
	}
}
