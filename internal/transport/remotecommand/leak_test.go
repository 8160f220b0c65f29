package remotecommand

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests when goroutines outlive them. spdystream
// hands a failed close's error to its owner for up to a second from a
// goroutine of its own: bounded, and not ours to wait for. Likewise
// client-go's WebSocket heartbeat, when crisp closes the connection itself
// (a session ended by a local write error): it returns at its next ping,
// which fails on the closed connection. And cri-streaming's v1 handler,
// which waits its stream-creation timeout (10s in the fake server) for the
// streams of a session crisp refused at the upgrade (the stdin guard): the
// test server's, bounded.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("k8s.io/cri-streaming/pkg/streaming/remotecommand.(*v1ProtocolHandler).waitForStreams"),
		goleak.IgnoreTopFunction("github.com/moby/spdystream.(*Connection).shutdown"),
		goleak.IgnoreTopFunction("k8s.io/client-go/tools/remotecommand.(*heartbeat).start"))
}
