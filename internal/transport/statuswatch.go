package transport

import (
	"net/http"
	"sync/atomic"

	"k8s.io/streaming/pkg/httpstream"
)

// A v4 or v5 server always ends a session with a status on the error stream,
// {"status":"Success"} included. client-go's SPDY executor treats an error
// stream that closes empty as success, so a runtime that drops the
// connection mid-output would look like a clean exit 0 with truncated
// output. statusWatch records whether any status arrived so the session can
// tell a cut from a success. (client-go's WebSocket executor already reports
// a cut as an error.)
type statusWatch struct {
	seen atomic.Bool
}

// statusCarryingProtocol reports whether the protocol's servers always send
// a final status (v4 and v5; v1-v3 send one only on failure).
func statusCarryingProtocol(protocol string) bool {
	return protocol == ExecProtocolV4 || protocol == ExecProtocolV5
}

// wrap returns conn with its error stream observed.
func (w *statusWatch) wrap(conn httpstream.Connection) httpstream.Connection {
	return &watchedConn{Connection: conn, watch: w}
}

type watchedConn struct {
	httpstream.Connection
	watch *statusWatch
}

func (c *watchedConn) CreateStream(headers http.Header) (httpstream.Stream, error) {
	stream, err := c.Connection.CreateStream(headers)
	if err != nil || headers.Get("streamType") != "error" {
		return stream, err
	}
	return &watchedStream{Stream: stream, watch: c.watch}, nil
}

type watchedStream struct {
	httpstream.Stream
	watch *statusWatch
}

func (s *watchedStream) Read(p []byte) (int, error) {
	n, err := s.Stream.Read(p)
	if n > 0 {
		s.watch.seen.Store(true)
	}
	return n, err
}
