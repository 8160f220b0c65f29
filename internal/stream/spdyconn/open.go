package spdyconn

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"k8s.io/streaming/pkg/httpstream"
	streamspdy "k8s.io/streaming/pkg/httpstream/spdy"
)

// The connections Open can run a session on.
const (
	// KindCrisp is this package's Conn, the default.
	KindCrisp = "crisp"
	// KindSpdystream is k8s.io/streaming's connection on spdystream, the
	// way back when a runtime misbehaves with crisp's own: what crisp ran
	// on before (and kubectl runs on). It has spdystream's limits: no bound
	// on a server's header blocks, a fixed 30s wait for a stream's reply
	// (shortened here only as far as the caller is concerned), and no
	// overrun wait (a stream nobody reads stops the connection).
	KindSpdystream = "spdystream"
)

// EnvKind is the environment variable that picks the connection when the
// caller names none: CRISP_SPDY=spdystream is the way back (docs/design.md).
const EnvKind = "CRISP_SPDY"

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
		kind = os.Getenv(EnvKind)
	}
	switch kind {
	case "", KindCrisp:
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
		c, err := streamspdy.NewClientConnectionWithPings(conn, o.PingPeriod)
		if err != nil {
			return nil, err
		}
		return &boundedCreate{Connection: c, timeout: o.CreateTimeout}, nil
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

// boundedCreate stops waiting for spdystream's stream reply after timeout;
// spdystream's own wait (30s) or the connection's close ends the call left
// behind.
type boundedCreate struct {
	httpstream.Connection
	timeout time.Duration
}

func (c *boundedCreate) CreateStream(headers http.Header) (httpstream.Stream, error) {
	if c.timeout <= 0 {
		return c.Connection.CreateStream(headers)
	}
	type created struct {
		s   httpstream.Stream
		err error
	}
	ch := make(chan created, 1)
	go func() {
		s, err := c.Connection.CreateStream(headers)
		ch <- created{s, err}
	}()
	t := time.NewTimer(c.timeout)
	defer t.Stop()
	select {
	case r := <-ch:
		return r.s, r.err
	case <-t.C:
		go func() {
			if r := <-ch; r.s != nil {
				_ = r.s.Reset() // answered too late: nobody uses it
			}
		}()
		return nil, fmt.Errorf("%w: no reply within %s", ErrCreateTimeout, c.timeout)
	}
}
