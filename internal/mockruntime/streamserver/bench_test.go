package streamserver

import (
	"context"
	"io"
	"strconv"
	"testing"

	"k8s.io/client-go/tools/remotecommand" //nolint:depguard // test-only: the clients crictl and critest use, as independent checks of the server
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// BenchmarkExecStdout: exec stdout throughput through the server, with
// client-go as the client (SPDY v4 through cri-streaming's handler, SPDY v5
// and WebSocket v5 through this package's).
func BenchmarkExecStdout(b *testing.B) {
	const size = 64 << 20
	for _, c := range []struct {
		profile Profile
		k       executorKind
	}{{ProfileCRIStreaming, spdyExecV4}, {ProfileFull, spdyExecV5}, {ProfileFull, wsExecV4}, {ProfileFull, wsExecV5}} {
		b.Run(string(c.profile)+"/"+c.k.name, func(b *testing.B) {
			srv, _ := startServer(b, Config{Profile: c.profile})
			b.SetBytes(size)
			for b.Loop() {
				u := execURL(b, srv, &runtimeapi.ExecRequest{Cmd: []string{"zeros", strconv.Itoa(size)}, Stdout: true})
				var out countingWriter
				if err := c.k.executor(b, nil, u).StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdout: &out}); err != nil {
					b.Fatal(err)
				}
				if out.n != size {
					b.Fatalf("%d bytes, want %d", out.n, size)
				}
			}
		})
	}
}

// BenchmarkExecTrue: the latency of an exec that prints nothing, upgrade
// included (the URL comes from GetExec, as after the CRI call).
func BenchmarkExecTrue(b *testing.B) {
	for _, c := range []struct {
		profile Profile
		k       executorKind
	}{{ProfileCRIStreaming, spdyExecV4}, {ProfileFull, spdyExecV5}, {ProfileFull, wsExecV5}} {
		b.Run(string(c.profile)+"/"+c.k.name, func(b *testing.B) {
			srv, _ := startServer(b, Config{Profile: c.profile})
			for b.Loop() {
				u := execURL(b, srv, &runtimeapi.ExecRequest{Cmd: []string{"zeros", "0"}, Stdout: true})
				if err := c.k.executor(b, nil, u).StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdout: io.Discard}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPortForwardEcho: bytes through a forwarded connection to a
// loopback echo server and back, with client-go's forwarder (SPDY and the
// tunnel). Each byte crosses the server twice; SetBytes counts it once.
func BenchmarkPortForwardEcho(b *testing.B) {
	const size = 16 << 20
	payload := make([]byte, size)
	remote := echoListener(b)
	for _, c := range []struct {
		profile Profile
		tunnel  bool
	}{{ProfileCRIStreaming, false}, {ProfileFull, true}} {
		name := string(c.profile) + "/spdy"
		if c.tunnel {
			name = string(c.profile) + "/tunnel"
		}
		b.Run(name, func(b *testing.B) {
			srv, _ := startServer(b, Config{Profile: c.profile})
			f := clientForward(b, srv, c.tunnel, remote)
			defer f.cancel()
			b.SetBytes(size)
			for b.Loop() {
				got, err := roundTrip(b, f.local, payload)
				if err != nil || len(got) != size {
					b.Fatalf("%d bytes back, err %v", len(got), err)
				}
			}
		})
	}
}
