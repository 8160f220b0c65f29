package streamserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"
)

// session is one consumed token: the request it stood for and the client
// connection that presented it.
type session struct {
	srv  *server
	kind string
	req  any
	conn *trackedConn
	ctx  context.Context // cancelled when the upgrade request's handler returns

	mu        sync.Mutex
	remaining int64 // payload bytes the client may still receive; -1: no drop-after
	cut       bool
}

type sessionKey struct{}

func withSession(ctx context.Context, s *session) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

func sessionFrom(ctx context.Context) *session {
	s, _ := ctx.Value(sessionKey{}).(*session)
	return s
}

// errDropped is what a backend's write sees once drop-after has cut the
// connection.
var errDropped = errors.New("stream connection cut by the mock runtime's fault drop-after")

// reserve takes up to n bytes of the drop-after allowance and reports how
// many may be sent; fewer than n means the connection must be cut after
// sending them.
func (s *session) reserve(n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.remaining < 0 {
		return n
	}
	if s.cut {
		return 0
	}
	if int64(n) <= s.remaining {
		s.remaining -= int64(n)
		return n
	}
	allowed := int(s.remaining)
	s.remaining = 0
	return allowed
}

// cutConnection ends the client's connection abruptly (drop-after).
func (s *session) cutConnection() {
	s.mu.Lock()
	s.cut = true
	s.mu.Unlock()
	if s.conn != nil {
		_ = s.conn.abort()
	}
}

// payloadWriter counts the stream payload a backend sends to the client
// and cuts the connection when drop-after's allowance runs out.
type payloadWriter struct {
	sess *session
	w    io.Writer
}

func (p *payloadWriter) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return p.w.Write(b)
	}
	allowed := p.sess.reserve(len(b))
	if allowed == len(b) {
		return p.w.Write(b)
	}
	n := 0
	if allowed > 0 {
		n, _ = p.w.Write(b[:allowed])
	}
	p.sess.cutConnection()
	return n, errDropped
}

// payloadWriteCloser is a payloadWriter for a backend's stdout/stderr.
type payloadWriteCloser struct {
	payloadWriter
	c io.Closer
}

func (p *payloadWriteCloser) Close() error { return p.c.Close() }

// payloadStream is a payloadWriter for a forwarded connection's data stream.
type payloadStream struct {
	payloadWriter
	rc io.ReadCloser
}

func (p *payloadStream) Read(b []byte) (int, error) { return p.rc.Read(b) }
func (p *payloadStream) Close() error               { return p.rc.Close() }

func (s *session) wrapOut(w io.WriteCloser) io.WriteCloser {
	if s == nil || s.remaining < 0 || w == nil {
		return w
	}
	return &payloadWriteCloser{payloadWriter{s, w}, w}
}

func (s *session) wrapStream(rw io.ReadWriteCloser) io.ReadWriteCloser {
	if s == nil || s.remaining < 0 {
		return rw
	}
	return &payloadStream{payloadWriter{s, rw}, rw}
}

// ---- backend calls, shared by every profile ----

func (s *server) exec(ctx context.Context, sess *session, containerID string, cmd []string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommandserver.TerminalSize) error {
	if !s.track() {
		return errors.New("streaming server closed")
	}
	defer s.wg.Done()
	if !s.faults.withholdStatus {
		return s.backend.Exec(ctx, containerID, cmd, in, sess.wrapOut(out), sess.wrapOut(errOut), tty, resize)
	}
	err := s.backend.Exec(ctx, containerID, cmd, in, sess.wrapOut(out), sess.wrapOut(errOut), tty, resize)
	for _, w := range []io.WriteCloser{out, errOut} { // the output ends; the status (err) is held back
		if w != nil {
			_ = w.Close()
		}
	}
	life := s.lifeContext()
	select {
	case <-ctx.Done():
	case <-life.Done():
	}
	return err
}

func (s *server) attach(ctx context.Context, sess *session, containerID string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommandserver.TerminalSize) error {
	if !s.track() {
		return errors.New("streaming server closed")
	}
	defer s.wg.Done()
	return s.backend.Attach(ctx, containerID, in, sess.wrapOut(out), sess.wrapOut(errOut), tty, resize)
}

// portForward runs one forwarded connection. ctx may be nil (cri-streaming
// gives none): the server's life context is used then.
func (s *server) portForward(ctx context.Context, sess *session, podID string, port int32, stream io.ReadWriteCloser) error {
	if !s.track() {
		return errors.New("streaming server closed")
	}
	defer s.wg.Done()
	n := s.forwarded.Add(1)
	if s.faults.resetForward > 0 && n == int64(s.faults.resetForward) {
		_ = stream.Close()
		return fmt.Errorf("forwarded connection %d reset by the mock runtime's fault %s=%d", n, FaultResetForwardConn, s.faults.resetForward)
	}
	if ctx == nil {
		ctx = s.lifeContext()
	}
	return s.backend.PortForward(ctx, podID, port, sess.wrapStream(stream))
}

// ---- connection tracking ----

// trackedListener registers every accepted connection with its generation
// so that Stop can cut hijacked connections, which net/http forgets.
type trackedListener struct {
	net.Listener
	gen *generation
	// refuse says whether to reset the connection just accepted
	// (refuse-conn-one-in).
	refuse func() bool
}

func (l *trackedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.refuse() {
			resetConn(c)
			continue
		}
		tc := &trackedConn{Conn: c, gen: l.gen}
		l.gen.mu.Lock()
		if l.gen.stopped {
			l.gen.mu.Unlock()
			_ = c.Close()
			continue
		}
		l.gen.conns[tc] = struct{}{}
		l.gen.mu.Unlock()
		return tc, nil
	}
}

type trackedConn struct {
	net.Conn
	gen *generation
	// linger is set once a session owns the connection: its close then lets
	// the client read what is still queued (see lingerClose).
	linger atomic.Bool
	once   sync.Once
	err    error
}

// lingerTimeout bounds how long a closing session waits for its client to
// read the last output and hang up.
const lingerTimeout = 2 * time.Second

// Close ends the connection; a session's connection lingers.
func (c *trackedConn) Close() error { return c.close(c.linger.Load()) }

// abort ends the connection at once, as a killed runtime or a fault does.
func (c *trackedConn) abort() error { return c.close(false) }

func (c *trackedConn) close(linger bool) error {
	c.once.Do(func() {
		if linger {
			c.err = lingerClose(c.Conn)
		} else {
			c.err = c.Conn.Close()
		}
		c.gen.mu.Lock()
		delete(c.gen.conns, c)
		c.gen.mu.Unlock()
	})
	return c.err
}

// lingerClose half-closes a TCP connection and reads until the client hangs
// up before closing it. A plain close with client bytes still unread (the
// end of stdin of a command that exited without reading it, any frame that
// crossed the session's end) makes the kernel answer with a reset and drop
// the output not yet sent, so the client would lose the end of its output
// and the exit status. The libraries serving the streams close that way
// (and so do the runtimes that embed them); the listener's connection is
// where the mock can close as a careful server would, for every protocol.
func lingerClose(c net.Conn) error {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c.Close()
	}
	if tc.CloseWrite() == nil && tc.SetReadDeadline(time.Now().Add(lingerTimeout)) == nil {
		_, _ = io.Copy(io.Discard, tc) // until the client's FIN, an error or the deadline
	}
	return tc.Close()
}

type connKey struct{}

func connContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if t, ok := c.(*trackedConn); ok {
		return context.WithValue(ctx, connKey{}, t)
	}
	return ctx
}

func connFrom(ctx context.Context) *trackedConn {
	c, _ := ctx.Value(connKey{}).(*trackedConn)
	return c
}

// refuseConn says whether refuse-conn-one-in resets the connection just
// accepted: one in N, at random.
func (s *server) refuseConn() bool {
	return s.faults.refuseOneIn > 0 && rand.IntN(s.faults.refuseOneIn) == 0
}

// resetConn closes c with a reset (SO_LINGER 0) rather than a FIN, as a
// refusal by an overloaded server reaches its client.
func resetConn(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // a close without the reset is still a refusal
	}
	_ = c.Close() // nothing was read: nothing to report
}
