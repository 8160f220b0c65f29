package probe

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/crisp-cri/crisp/internal/transport"

	"github.com/crisp-cri/crisp/internal/transport/remotecommand"

	"github.com/crisp-cri/crisp/internal/transport/portforward"
)

// placeholderPort is named in a direct WebSocket port-forward handshake
// when no --port was given: that protocol needs a port in the URL to
// upgrade at all, and probe then only looks at the handshake.
const placeholderPort = 1

// TransportStreamer implements Streamer on internal/transport: one Try per
// exec/attach attempt, one ConnectPortForward per forward attempt.
type TransportStreamer struct {
	Config transport.Config
}

// Stream implements Streamer.
func (s TransportStreamer) Stream(ctx context.Context, url string, p Protocol, sess Session) (Handshake, error) {
	streams := remotecommand.Streams{Stdin: sess.Stdin, Stdout: sess.Stdout, Stderr: sess.Stderr, TTY: sess.TTY}
	var q *sizeQueue
	if sess.TTY && sess.Size != nil {
		q = newSizeQueue(*sess.Size, sess.Resize)
		defer q.stop()
		streams.Resize = q
	}
	offer := transport.Offer{Transport: p.Transport, Protocols: []string{p.Name}}
	att, err := remotecommand.Try(ctx, "probe", url, offer, s.Config, streams)
	return Handshake{
		Accepted:   att.Accepted(),
		Status:     att.Status,
		Reason:     att.Reason,
		Negotiated: att.Protocol,
		Upgrade:    att.Upgrade,
		TimedOut:   timedOut(ctx, att, err),
	}, err
}

// timedOut is the one classification of exec, attach and port-forward
// attempts: no answer in time, whichever bound fired first (the upgrade's
// own, the attempt's deadline, or the connection's deadline, which can fire
// a moment before the context is marked done), and however the transport
// words it. An HTTP answer, even a late one, is never a timeout.
func timedOut(ctx context.Context, att transport.Attempt, err error) bool {
	if att.Accepted() || att.Status != 0 || err == nil {
		return false
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return true
	}
	var ute *transport.UpgradeTimeoutError
	var netErr net.Error
	return errors.As(err, &ute) || errors.Is(err, portforward.ErrUpgradeTimeout) ||
		errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout()
}

// Forward implements Streamer.
func (s TransportStreamer) Forward(ctx context.Context, url string, p Protocol, port int32) (Handshake, Conn, error) {
	ports := []uint16{uint16(port)}
	if port == 0 {
		ports = []uint16{placeholderPort}
	}
	offer := transport.Offer{Transport: p.Transport, Protocols: []string{p.Name}}
	start := time.Now()
	sess, att, err := portforward.Connect(ctx, url, offer, ports, s.Config)
	hs := Handshake{Accepted: att.Accepted(), Status: att.Status, Reason: att.Reason, Negotiated: att.Protocol, Upgrade: att.Upgrade, TimedOut: timedOut(ctx, att, err)}
	var ute *transport.UpgradeTimeoutError
	if hs.TimedOut && !errors.As(err, &ute) {
		// Say it as exec and attach do: port-forward's own words are a bare
		// "context deadline exceeded", or its upgrade bound when the
		// connection's deadline fired first.
		err = &transport.UpgradeTimeoutError{Op: "probe", Offer: offer, URL: url, After: time.Since(start)}
	}
	if err != nil {
		if sess != nil {
			_ = sess.Close() // an error closing or writing here has nowhere better to go
		}
		return hs, nil, err
	}
	if port == 0 {
		return hs, nil, sess.Close()
	}
	conn, err := sess.Open(ctx, uint16(port))
	if err != nil {
		_ = sess.Close() // an error closing or writing here has nowhere better to go
		return hs, nil, err
	}
	return hs, &sessionConn{ForwardConn: conn, sess: sess}, nil
}

// sessionConn is a forwarded connection that owns its session: closing it
// tears the streaming connection down too.
type sessionConn struct {
	portforward.ForwardConn
	sess portforward.ForwardSession
	once sync.Once
}

func (c *sessionConn) Close() error {
	err := c.ForwardConn.Close()
	c.once.Do(func() {
		if serr := c.sess.Close(); err == nil {
			err = serr
		}
	})
	return err
}

// sizeQueue hands client-go the initial terminal size, then each later
// one, then nil when the session ends (so its resize goroutine exits).
type sizeQueue struct {
	first chan remotecommand.TerminalSize
	later <-chan TermSize
	done  chan struct{}
	once  sync.Once
}

func newSizeQueue(size TermSize, later <-chan TermSize) *sizeQueue {
	q := &sizeQueue{first: make(chan remotecommand.TerminalSize, 1), later: later, done: make(chan struct{})}
	q.first <- remotecommand.TerminalSize{Width: size.Width, Height: size.Height}
	return q
}

// Next implements remotecommand.TerminalSizeQueue.
func (q *sizeQueue) Next() *remotecommand.TerminalSize {
	select {
	case s := <-q.first:
		return &s
	default:
	}
	select {
	case s, ok := <-q.later:
		if !ok {
			return nil
		}
		return &remotecommand.TerminalSize{Width: s.Width, Height: s.Height}
	case <-q.done:
		return nil
	}
}

func (q *sizeQueue) stop() { q.once.Do(func() { close(q.done) }) }
