package spdyconn

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/moby/spdystream"
	"k8s.io/streaming/pkg/httpstream"
)

// spdystreamReplyTimeout is how long a stream waits for its reply when the
// caller sets no create timeout: k8s.io/streaming's fixed wait.
const spdystreamReplyTimeout = 30 * time.Second

// spdystreamReplyPoll is the slice a stream's wait for its reply is cut
// into: spdystream's wait cannot be woken by the connection's end, so the
// end is noticed between slices.
const spdystreamReplyPoll = 20 * time.Millisecond

// spdystreamLateAnswer is how long a stream given up on (no reply in time,
// or the connection ended) still takes an answer that was on its way.
const spdystreamLateAnswer = 100 * time.Millisecond

// spdystreamConn is the way back (KindSpdystream): spdystream's client
// connection set up as k8s.io/streaming does it for kubectl (pings, a reply
// wait per stream, every stream reset at Close), but with every stream it
// creates taken out of spdystream's stream table again. spdystream's Close
// waits, with no bound, for that table to empty; a stream created as the
// connection is lost lands in it after spdystream emptied it for the lost
// connection, and nothing else removes it: k8s.io/streaming drops such a
// stream on its error without resetting it, and Close then leaves two
// goroutines waiting for good.
type spdystreamConn struct {
	conn          *spdystream.Connection
	createTimeout time.Duration
	closing       chan struct{}

	mu      sync.Mutex
	closed  bool
	streams map[uint32]*spdystream.Stream
}

func newSpdystreamConn(nc net.Conn, pingPeriod, createTimeout time.Duration) (*spdystreamConn, error) {
	// framerLimits (limits.go): spdystream's own defaults let a server's
	// header block inflate past a GiB.
	sc, err := spdystream.NewConnectionWithOptions(nc, false, framerLimits...)
	if err != nil {
		_ = nc.Close() // nothing was started on it
		return nil, err
	}
	c := &spdystreamConn{conn: sc, createTimeout: createTimeout, closing: make(chan struct{}),
		streams: make(map[uint32]*spdystream.Stream)}
	go sc.Serve(c.accept)
	if pingPeriod > 0 {
		go c.sendPings(pingPeriod)
	}
	return c, nil
}

// accept takes a stream the server opens, as k8s.io/streaming does (CRI
// streaming servers open none).
func (c *spdystreamConn) accept(s *spdystream.Stream) {
	if !c.track(s) {
		_ = s.Reset()
		return
	}
	_ = s.SendReply(http.Header{}, false) // a failure shows on the stream
}

// track records s, unless the connection is closed.
func (c *spdystreamConn) track(s *spdystream.Stream) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.streams[s.Identifier()] = s
	return true
}

// drop forgets s and resets it, which takes it out of spdystream's table.
func (c *spdystreamConn) drop(s *spdystream.Stream) {
	c.mu.Lock()
	delete(c.streams, s.Identifier())
	c.mu.Unlock()
	_ = s.Reset() // on a lost connection the reset frame cannot go out: nothing to do about it
}

// CreateStream opens a stream and waits for its reply. A stream that fails
// (not sent, refused, no reply in time, the connection lost or closed) is
// reset before the error returns.
func (c *spdystreamConn) CreateStream(headers http.Header) (httpstream.Stream, error) {
	if c.ended() {
		return nil, errClosed
	}
	s, err := c.conn.CreateStream(headers, nil, false)
	if s == nil {
		return nil, err
	}
	switch {
	case !c.track(s):
		err = errClosed
	case err == nil:
		err = c.waitReply(s)
	}
	if err != nil {
		c.drop(s)
		if !errors.Is(err, ErrReset) {
			// A reset the server sent as this wait gave up may be in
			// spdystream's frame handler already, past its look-up of the
			// stream: it then blocks until someone takes it, holding up
			// every frame after it. Take it.
			_ = s.WaitTimeout(spdystreamLateAnswer)
		}
		return nil, err
	}
	return s, nil
}

// waitReply waits for s's reply, the create timeout, or the connection's
// end, whichever comes first.
func (c *spdystreamConn) waitReply(s *spdystream.Stream) error {
	timeout := c.createTimeout
	if timeout <= 0 {
		timeout = spdystreamReplyTimeout
	}
	deadline := time.Now().Add(timeout)
	for {
		err := s.WaitTimeout(spdystreamReplyPoll)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, spdystream.ErrReset):
			return ErrReset
		case !errors.Is(err, spdystream.ErrTimeout):
			return err
		case c.ended():
			return errClosed
		case time.Now().After(deadline):
			return fmt.Errorf("%w: no reply within %s", ErrCreateTimeout, timeout)
		}
	}
}

// ended reports whether the connection was closed here or lost.
func (c *spdystreamConn) ended() bool {
	select {
	case <-c.closing:
		return true
	case <-c.conn.CloseChan():
		return true
	default:
		return false
	}
}

// Close resets every stream still known and closes the connection; streams
// being created fail and reset themselves.
func (c *spdystreamConn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.closing)
	streams := c.streams
	c.streams = nil
	c.mu.Unlock()
	for _, s := range streams {
		_ = s.Reset()
	}
	return c.conn.Close()
}

func (c *spdystreamConn) CloseChan() <-chan bool { return c.conn.CloseChan() }

func (c *spdystreamConn) SetIdleTimeout(timeout time.Duration) { c.conn.SetIdleTimeout(timeout) }

// RemoveStreams forgets streams the caller is done with.
func (c *spdystreamConn) RemoveStreams(streams ...httpstream.Stream) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range streams {
		if s != nil {
			delete(c.streams, s.Identifier())
		}
	}
}

// sendPings pings every period until the connection ends, as
// k8s.io/streaming does.
func (c *spdystreamConn) sendPings(period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-c.conn.CloseChan():
			return
		case <-t.C:
		}
		_, _ = c.conn.Ping() // a failed ping changes nothing: the connection's end shows on CloseChan
	}
}
