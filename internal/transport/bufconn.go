package transport

import (
	"bufio"
	"context"
	"io"
	"net"
)

// ReadBufferSize is the read buffer beneath a SPDY connection: large enough
// that one read syscall brings in several frames of cri-streaming's 32 KiB
// chunks, small enough to keep the client's memory flat.
const ReadBufferSize = 64 << 10

// BufferedConn is a net.Conn whose reads go through a bufio.Reader.
// spdystream's framer reads each frame header with encoding/binary.Read
// straight from the connection: without a buffer that is one read syscall
// per 4-byte field, two per frame before the payload. Reads larger than
// the buffer, when it is empty, go to the connection directly, so a frame's
// payload costs no extra copy.
type BufferedConn struct {
	net.Conn
	r *bufio.Reader
}

// NewBufferedConn wraps c; r, when not nil, is a reader over c that may hold
// bytes already read past an upgrade answer (they are read first).
func NewBufferedConn(c net.Conn, r *bufio.Reader) *BufferedConn {
	var src io.Reader = c
	if r != nil && r.Buffered() > 0 {
		// A big read of r, once its few bytes are out, goes straight to c.
		src = r
	}
	return &BufferedConn{Conn: c, r: bufio.NewReaderSize(src, ReadBufferSize)}
}

func (c *BufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// Buffered is how many bytes were read from the connection and not yet
// returned.
func (c *BufferedConn) Buffered() int { return c.r.Buffered() }

// DialFunc dials a network address, as net.Dialer.DialContext.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// BufferedDial returns dial with each connection it opens wrapped in a
// BufferedConn. Only for plain TCP under a protocol that reads small
// pieces: TLS already reads whole records, and gorilla/websocket keeps its
// own read buffer.
func BufferedDial(dial DialFunc) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return NewBufferedConn(c, nil), nil
	}
}
