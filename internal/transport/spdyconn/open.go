package spdyconn

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"k8s.io/streaming/pkg/httpstream"
)

// The connections Open can run a session on.
const (
	// KindCrisp is this package's Conn, the default.
	KindCrisp = "crisp"
	// KindSpdystream is spdystream's connection, set up as
	// k8s.io/streaming does for kubectl (spdystream.go), the way back when a
	// runtime misbehaves with crisp's own: what crisp ran on before. It has
	// spdystream's limits but for header blocks (bounded as crisp's own
	// are): no overrun wait (a stream nobody reads stops the connection).
	KindSpdystream = "spdystream"
)

// EnvKind is the environment variable that picks the connection when the
// caller names none: CRISP_SPDY=spdystream is the way back (docs/design.md).
const EnvKind = "CRISP_SPDY"

// KindInEffect is the connection Open runs on when the caller names none:
// $CRISP_SPDY, else KindCrisp.
func KindInEffect() string {
	if kind := os.Getenv(EnvKind); kind != "" {
		return kind
	}
	return KindCrisp
}

// Options set a connection up.
type Options struct {
	// Kind is KindCrisp or KindSpdystream; "" is $CRISP_SPDY, else
	// KindCrisp.
	Kind string
	// PingPeriod > 0 sends a ping that often.
	PingPeriod time.Duration
	// CreateTimeout > 0 bounds the wait for a stream's reply
	// (SetCreateTimeout).
	CreateTimeout time.Duration
	// OverrunWait > 0 drops a stream whose reader stopped (SetOverrunWait;
	// crisp's connection only).
	OverrunWait time.Duration
}

// Open starts a client connection of o.Kind on nc, the connection an
// upgrade answered with 101, read on through br (see New).
func Open(nc net.Conn, br *bufio.Reader, o Options) (httpstream.Connection, error) {
	kind := o.Kind
	if kind == "" {
		kind = KindInEffect()
	}
	switch kind {
	case KindCrisp:
		c, err := New(nc, br, o.PingPeriod)
		if err != nil {
			return nil, err
		}
		c.SetCreateTimeout(o.CreateTimeout)
		c.SetOverrunWait(o.OverrunWait)
		return c, nil
	case KindSpdystream:
		conn := nc
		if br != nil {
			conn = &readThrough{Conn: nc, r: br}
		}
		c, err := newSpdystreamConn(conn, o.PingPeriod, o.CreateTimeout)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	return nil, fmt.Errorf("%w %q (%s): want %s (the default) or %s", ErrUnknownKind, kind, EnvKind, KindCrisp, KindSpdystream)
}

// ErrUnknownKind is Open's answer to a kind it does not know.
var ErrUnknownKind = errors.New("unknown SPDY connection")

// readThrough reads nc through the reader the upgrade answer was read with.
type readThrough struct {
	net.Conn
	r *bufio.Reader
}

func (c *readThrough) Read(p []byte) (int, error) { return c.r.Read(p) }

// Pinger is conn's way to send one ping, for transport/liveness: a PING
// frame on crisp's connection, spdystream's Ping (which waits for the
// answer or the connection's end) on the way back; nil for a connection
// Open did not make.
func Pinger(conn httpstream.Connection) func() error {
	switch c := conn.(type) {
	case *Conn:
		return c.Ping
	case *spdystreamConn:
		return func() error {
			_, err := c.conn.Ping()
			return err
		}
	}
	return nil
}
