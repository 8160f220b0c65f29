package portforward

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	clientportforward "k8s.io/client-go/tools/portforward"
	"k8s.io/klog/v2"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/transport/liveness"
	"github.com/crisp-cri/crisp/internal/transport/spdyconn"
)

// Header names and values of the SPDY port-forward protocol (kubelet's
// k8s.io/api/core/v1 constants, restated to keep that package out of crisp).
const (
	pfHeaderStreamType = "streamType"
	pfHeaderPort       = "port"
	pfHeaderRequestID  = "requestID"
	pfStreamData       = "data"
	pfStreamError      = "error"
)

// pfPingPeriod keeps idle SPDY connections alive through NAT and lets a dead
// runtime be noticed, as kubectl does.
const pfPingPeriod = 5 * time.Second

// pfErrorGrace bounds how long a finished data stream waits for its error
// stream to end (they travel independently on the SPDY connection).
const pfErrorGrace = 2 * time.Second

// pfOverrunWait is how long a forwarded connection whose local client reads
// nothing may hold up the other connections of the SPDY connection it
// shares once it has 8 MiB unread (spdyconn's bound): then that connection
// alone is dropped, and the others flow on. SPDY as the runtimes speak it
// has no flow control per stream, so until then every connection of the
// session waits with it. A connection alone on its session holds up nobody:
// it is waited for however long its client pauses, and loses nothing
// (spdySession.setOverrunLocked).
const pfOverrunWait = 2 * time.Second

// pfMaxErrorMessage bounds what is kept of an error stream.
const pfMaxErrorMessage = 64 << 10

// connectSPDY upgrades an HTTP POST to SPDY/3.1 offering att.Protocols.
func connectSPDY(ctx context.Context, att *transport.Attempt, cfg transport.Config) (ForwardSession, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, att.URL, nil)
	if err != nil {
		return nil, err
	}
	for _, p := range att.Protocols {
		req.Header.Add(httpstream.HeaderProtocolVersion, p)
	}
	start := time.Now()
	var peer *liveness.Conn // the connection, watched for a dead runtime
	conn, br, resp, err := transport.UpgradeSPDY(req, cfg.TLS, pfDialWatched(cfg, &peer))
	att.Upgrade = time.Since(start)
	if err != nil {
		return nil, err
	}
	att.Status = resp.StatusCode
	if !spdyconn.Switched(resp) {
		att.Reason = transport.RefusalReason(resp)
		_ = conn.Close()
		return nil, &transport.RefusedError{Offer: att.Offer, URL: att.URL, Status: att.Status, Reason: att.Reason}
	}
	protocol := resp.Header.Get(httpstream.HeaderProtocolVersion)
	if !pfContains(att.Protocols, protocol) {
		_ = conn.Close()
		att.Reason = fmt.Sprintf("switched protocols but chose %q, which was not offered", protocol)
		return nil, &transport.RefusedError{Offer: att.Offer, URL: att.URL, Status: att.Status, Reason: att.Reason}
	}
	att.Protocol = protocol
	var nc net.Conn = &pfOnceCloseConn{Conn: conn}
	sc, err := spdyconn.Open(nc, br, pfConnOptions(cfg, pfPingPeriod))
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("starting SPDY: %w", err)
	}
	peer.Start(spdyconn.Pinger(sc))
	s := newSPDYSession(sc, nc, protocol, cfg)
	s.peer = peer
	return s, nil
}

// connectTunnel upgrades to a WebSocket whose binary messages carry SPDY.
func connectTunnel(ctx context.Context, att *transport.Attempt, cfg transport.Config) (ForwardSession, error) {
	ws, err := pfDialWebSocket(ctx, att, att.URL, cfg, pfWebSocketBuffer)
	if err != nil {
		return nil, err
	}
	tc := &pfOnceCloseConn{Conn: clientportforward.NewTunnelingConnectionWithLogger(klog.Background(), ws)}
	sc, err := spdyconn.Open(tc, nil, pfConnOptions(cfg, clientportforward.PingPeriod))
	if err != nil {
		_ = tc.Close()
		return nil, fmt.Errorf("starting SPDY in the WebSocket tunnel: %w", err)
	}
	s := newSPDYSession(sc, tc, att.Protocol, cfg)
	s.peer = pfPeerOf(ws.NetConn())
	return s, nil
}

// pfConnOptions set a session's SPDY connection up for port-forward: a
// stream the runtime leaves unanswered fails after the request timeout. (The
// overrun wait follows the session's load: setOverrunLocked.)
func pfConnOptions(cfg transport.Config, ping time.Duration) spdyconn.Options {
	return spdyconn.Options{Kind: cfg.SPDYConnection, PingPeriod: ping, CreateTimeout: cfg.UpgradeTimeout}
}

// pfDialWebSocket makes one WebSocket handshake offering att.Protocols and
// fills in the handshake record.
func pfDialWebSocket(ctx context.Context, att *transport.Attempt, rawURL string, cfg transport.Config, bufSize int) (*websocket.Conn, error) {
	wsURL, err := transport.WebSocketURL(rawURL)
	if err != nil {
		return nil, err
	}
	var peer *liveness.Conn // the connection, watched for a dead runtime
	d := websocket.Dialer{
		Proxy:            http.ProxyFromEnvironment,
		TLSClientConfig:  cfg.TLS,
		Subprotocols:     att.Protocols,
		ReadBufferSize:   bufSize,
		WriteBufferSize:  bufSize,
		HandshakeTimeout: 45 * time.Second,
		NetDialContext:   pfDialWatched(cfg, &peer),
	}
	start := time.Now()
	ws, resp, err := d.DialContext(ctx, wsURL, nil)
	att.Upgrade = time.Since(start)
	if resp != nil {
		att.Status = resp.StatusCode
	}
	if err != nil {
		if resp != nil && errors.Is(err, websocket.ErrBadHandshake) {
			att.Reason = transport.RefusalReason(resp)
			_ = resp.Body.Close()
			return nil, &transport.RefusedError{Offer: att.Offer, URL: att.URL, Status: att.Status, Reason: att.Reason}
		}
		return nil, err
	}
	if protocol := ws.Subprotocol(); !pfContains(att.Protocols, protocol) {
		_ = ws.Close()
		att.Reason = fmt.Sprintf("switched protocols but chose subprotocol %q, which was not offered", protocol)
		return nil, &transport.RefusedError{Offer: att.Offer, URL: att.URL, Status: att.Status, Reason: att.Reason}
	}
	att.Protocol = ws.Subprotocol()
	if peer != nil {
		// gorilla's ping, answered by a pong its reader takes; an empty
		// payload, which the half-close pings' handler (websocket.go)
		// does not know and so leaves alone.
		peer.Start(func() error {
			return ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(peer.Bound()))
		})
	}
	return ws, nil
}

func pfContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// pfOnceCloseConn makes Close idempotent and quiet: the session closes the
// socket itself, and the SPDY library, closing it again (or first, when the
// server goes away), would otherwise hold a goroutine for a second to report
// an error to nobody.
type pfOnceCloseConn struct {
	net.Conn
	once sync.Once
}

func (c *pfOnceCloseConn) Close() error {
	// Nobody acts on a close error here, and the SPDY library would hold a
	// goroutine for a second to hand one to nobody.
	c.once.Do(func() { _ = c.Conn.Close() })
	return nil
}

// spdySession is one SPDY connection (direct or tunnelled) carrying any
// number of forwarded connections, each a data and an error stream.
type spdySession struct {
	conn     httpstream.Connection
	raw      net.Conn
	protocol string
	cfg      transport.Config
	nextID   atomic.Int64
	done     chan struct{}
	watch    sync.WaitGroup
	closing  chan struct{}
	closeOne sync.Once

	// active counts open forwarded connections; a retired session takes
	// no new ones and closes when the last one ends.
	mu          sync.Mutex
	active      int
	retired     bool
	idleRetired chan struct{} // closed once retired and idle
	idleOnce    sync.Once

	stall stallWatch // spdystall.go
	// peer watches the connection beneath for a dead runtime (nil: not
	// known); lostErr says what it saw.
	peer *liveness.Conn
}

// retire stops the session from being used for new connections and closes
// it a moment (pfRetireGrace) after its open connections have ended. After a
// failed connection the forwarder retires the SPDY connection it came on:
// containerd 1.6 stalls every third later connection on such a connection
// (their streams are never answered), so a fresh one is safer for what comes
// next. The grace spares servers a close racing their handling of the
// failure (cri-streaming can leave a goroutine waiting forever then).
func (s *spdySession) retire() {
	s.mu.Lock()
	s.retired = true
	idle := s.active == 0
	s.mu.Unlock()
	if idle {
		s.idleOnce.Do(func() { close(s.idleRetired) })
	}
}

// pfRetireGrace is how long an idle retired session stays open.
const pfRetireGrace = 2 * time.Second

func newSPDYSession(conn httpstream.Connection, raw net.Conn, protocol string, cfg transport.Config) *spdySession {
	s := &spdySession{conn: conn, raw: raw, protocol: protocol, cfg: cfg,
		done: make(chan struct{}), closing: make(chan struct{}), idleRetired: make(chan struct{})}
	s.watch.Add(1)
	go func() {
		defer s.watch.Done()
		select {
		case <-conn.CloseChan():
		case <-s.closing:
		case <-s.idleRetired:
			t := time.NewTimer(pfRetireGrace)
			select {
			case <-t.C:
				s.shutdown()
			case <-conn.CloseChan():
			case <-s.closing:
			}
			t.Stop()
		}
		close(s.done)
	}()
	return s
}

func (s *spdySession) Protocol() string      { return s.protocol }
func (s *spdySession) Done() <-chan struct{} { return s.done }

func (s *spdySession) Close() error {
	s.shutdown()
	s.watch.Wait()
	return nil
}

// shutdown closes the connection without waiting for the watcher.
func (s *spdySession) shutdown() {
	s.closeOne.Do(func() {
		close(s.closing)
		// The socket first: the SPDY library would close it only after a
		// graceful shutdown, and its own (second, quiet) close then has no
		// error to hold a goroutine for.
		_ = s.raw.Close()
		_ = s.conn.Close()
	})
}

// lost reports whether the session's connection has ended (lost, or
// closed here).
func (s *spdySession) lost() bool {
	select {
	case <-s.done:
		return true
	case <-s.conn.CloseChan():
		// The watcher above closes done a moment later; a stream that
		// ended with the connection asks now (spdyconn closes CloseChan
		// before it ends the streams).
		return true
	default:
		return false
	}
}

// Open creates the error stream, then the data stream, as kubectl does; the
// runtime pairs them by requestID.
func (s *spdySession) Open(ctx context.Context, port uint16) (ForwardConn, error) {
	s.acquire()
	return s.openAcquired(ctx, port)
}

// openAcquired is Open with the connection's slot already taken (acquire or
// tryAcquire); it gives the slot back on failure.
func (s *spdySession) openAcquired(ctx context.Context, port uint16) (ForwardConn, error) {
	if s.lost() {
		s.release()
		return nil, errSessionLost
	}
	if err := ctx.Err(); err != nil {
		s.release()
		return nil, err
	}
	id := strconv.FormatInt(s.nextID.Add(1)-1, 10)
	h := http.Header{}
	h.Set(pfHeaderStreamType, pfStreamError)
	h.Set(pfHeaderPort, strconv.Itoa(int(port)))
	h.Set(pfHeaderRequestID, id)
	errStream, err := s.conn.CreateStream(h)
	if err != nil {
		s.release()
		return nil, s.streamErr("error", port, err)
	}
	// crisp never writes on the error stream.
	_ = errStream.Close()
	c := &spdyForwardConn{session: s, port: port, errStream: errStream, errDone: make(chan struct{}), closed: make(chan struct{})}
	c.wg.Add(1)
	go c.readErrors()

	h.Set(pfHeaderStreamType, pfStreamData)
	data, err := s.conn.CreateStream(h)
	if err != nil {
		// The runtime may have failed this connection at once (nothing
		// listening) and reset the stream: its message says why.
		rerr := c.RemoteError()
		_ = c.Close()
		var re *RemoteError
		if errors.As(rerr, &re) {
			return nil, re
		}
		return nil, s.streamErr("data", port, err)
	}
	c.data = data
	return c, nil
}

func (s *spdySession) streamErr(kind string, port uint16, err error) error {
	if s.lost() {
		return fmt.Errorf("%w: %w", errSessionLost, err)
	}
	if errors.Is(err, spdyconn.ErrCreateTimeout) {
		return fmt.Errorf("port-forward: creating the %s stream for remote port %d: %w (raise --request-timeout to wait longer)", kind, port, err)
	}
	return fmt.Errorf("port-forward: creating the %s stream for remote port %d: %w", kind, port, err)
}

// spdyForwardConn is one forwarded connection: a data stream and the error
// stream the runtime reports failures on.
type spdyForwardConn struct {
	session     *spdySession
	port        uint16
	data        httpstream.Stream
	errStream   httpstream.Stream
	errMsg      []byte
	errDone     chan struct{}
	closed      chan struct{}
	closeOnce   sync.Once
	releaseOnce sync.Once
	wg          sync.WaitGroup
}

func (c *spdyForwardConn) readErrors() {
	defer c.wg.Done()
	defer close(c.errDone)
	msg, _ := io.ReadAll(io.LimitReader(c.errStream, pfMaxErrorMessage))
	c.errMsg = msg
}

func (c *spdyForwardConn) RemotePort() uint16 { return c.port }

// Read returns the remote port's bytes; at their end, the runtime's error
// message when it has already arrived (it travels on its own stream, so it
// may come later: see RemoteError).
func (c *spdyForwardConn) Read(p []byte) (int, error) {
	n, err := c.data.Read(p)
	if n > 0 {
		c.session.progressed()
	}
	if err == nil {
		return n, nil
	}
	select {
	case <-c.errDone:
		if rerr := c.verdict(); rerr != nil {
			return n, rerr
		}
	default:
	}
	return n, err
}

func (c *spdyForwardConn) verdict() error {
	if msg := strings.TrimSpace(string(c.errMsg)); msg != "" {
		return &RemoteError{Port: c.port, Message: msg}
	}
	return nil
}

// RemoteError waits (bounded) for the error stream to end and turns its
// message, or the loss of the whole connection, into an error.
func (c *spdyForwardConn) RemoteError() error {
	t := time.NewTimer(pfErrorGrace)
	defer t.Stop()
	select {
	case <-c.errDone:
		if err := c.verdict(); err != nil {
			return err
		}
	case <-c.closed:
	case <-t.C:
	}
	if c.session.lost() {
		return fmt.Errorf("remote port %d: %w", c.port, c.session.lostErr())
	}
	return nil
}

func (c *spdyForwardConn) Write(p []byte) (int, error) {
	c.session.writeStarts()
	n, err := c.data.Write(p)
	c.session.writeEnds()
	if err != nil && c.session.lost() {
		err = fmt.Errorf("remote port %d: %w", c.port, c.session.lostErr())
	}
	return n, err
}

// CloseWrite sends SPDY FIN on the data stream: the runtime closes the
// remote socket's write side and the reply keeps flowing.
func (c *spdyForwardConn) CloseWrite() error { return c.data.Close() }

func (c *spdyForwardConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		if c.data != nil {
			_ = c.data.Reset()
		}
		_ = c.errStream.Reset()
		if c.data != nil {
			c.session.conn.RemoveStreams(c.data, c.errStream)
		} else {
			c.session.conn.RemoveStreams(c.errStream)
		}
	})
	c.wg.Wait()
	c.releaseOnce.Do(c.session.release)
	return nil
}

func (c *spdyForwardConn) forwardSession() ForwardSession { return c.session }

// dropped is closed when spdyconn dropped the data stream because the
// local client stopped reading (pfOverrunWait); nil on connections that
// cannot tell.
func (c *spdyForwardConn) dropped() <-chan struct{} {
	if s, ok := c.data.(*spdyconn.Stream); ok {
		return s.Dropped()
	}
	return nil
}

// dropErr says why the connection was dropped.
func (c *spdyForwardConn) dropErr() error {
	if s, ok := c.data.(*spdyconn.Stream); ok {
		if err := s.Err(); err != nil {
			return fmt.Errorf("remote port %d: the local client stopped reading (%w); dropped this connection alone (reset) so the others on the same SPDY connection keep flowing", c.port, err)
		}
	}
	return nil
}
