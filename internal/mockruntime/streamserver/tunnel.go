package streamserver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-streaming/pkg/streaming/portforward"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"
)

// The port-forward tunnel, SPDY/3.1+portforward.k8s.io: a WebSocket whose
// binary messages carry a SPDY/3.1 connection, inside which the client
// opens the usual portforward.k8s.io data/error stream pairs (client-go's
// tunneling_dialer.go is the other end). cri-streaming has no server for
// it; this one upgrades the WebSocket, then hands cri-streaming's SPDY
// port-forward handler a request whose hijacked connection is the tunnel,
// so the stream pairs are served by the same code as plain SPDY.
func (h *ownHandler) serveTunnel(w http.ResponseWriter, r *http.Request, sess *session, req *runtimeapi.PortForwardRequest) {
	up := websocket.Upgrader{
		Subprotocols:    []string{pfTunnel},
		ReadBufferSize:  32 << 10,
		WriteBufferSize: 32 << 10,
		// Streaming URLs carry their own authority (the single-use token);
		// browsers are not clients here.
		CheckOrigin: func(*http.Request) bool { return true },
	}
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // gorilla answered the client
	}
	tunnel := newTunnelConn(ws)
	defer func() { _ = tunnel.Close() }()

	inner := r.Clone(r.Context())
	inner.Header = http.Header{}
	inner.Header.Set(httpstream.HeaderConnection, httpstream.HeaderUpgrade)
	inner.Header.Set(httpstream.HeaderUpgrade, spdy.HeaderSpdy31)
	inner.Header.Set(httpstream.HeaderProtocolVersion, pfSPDY)
	portforward.ServePortForward(&tunnelResponse{conn: tunnel}, inner, sessionExecutor{sess}, req.PodSandboxId, "", &portforward.V4Options{}, h.srv.idle, h.srv.create, []string{pfSPDY})
}

// tunnelResponse is the ResponseWriter cri-streaming's SPDY upgrader sees
// for a tunnelled connection: the WebSocket upgrade has already been
// answered, so the 101 it writes goes nowhere and Hijack yields the tunnel.
type tunnelResponse struct {
	conn   net.Conn
	header http.Header
}

func (t *tunnelResponse) Header() http.Header {
	if t.header == nil {
		t.header = http.Header{}
	}
	return t.header
}

func (t *tunnelResponse) WriteHeader(int) {}

func (t *tunnelResponse) Write(b []byte) (int, error) {
	return 0, errors.New("tunnel: no HTTP response inside the tunnel")
}

func (t *tunnelResponse) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return t.conn, bufio.NewReadWriter(bufio.NewReader(t.conn), bufio.NewWriter(t.conn)), nil
}

// tunnelConn is a net.Conn whose bytes travel in binary WebSocket messages
// (the server side of client-go's TunnelingConnection).
type tunnelConn struct {
	ws *websocket.Conn

	rmu     sync.Mutex
	reader  io.Reader // the message being read
	wmu     sync.Mutex
	closing sync.Once
	err     error
}

func newTunnelConn(ws *websocket.Conn) *tunnelConn { return &tunnelConn{ws: ws} }

func (c *tunnelConn) Read(p []byte) (int, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	for {
		if c.reader == nil {
			typ, r, err := c.ws.NextReader()
			if err != nil {
				var ce *websocket.CloseError
				if errors.As(err, &ce) && ce.Code == websocket.CloseNormalClosure {
					return 0, io.EOF
				}
				return 0, err
			}
			if typ != websocket.BinaryMessage {
				return 0, fmt.Errorf("tunnel: unexpected WebSocket message type %d", typ)
			}
			c.reader = r
		}
		n, err := c.reader.Read(p)
		if err == io.EOF {
			c.reader = nil
			if n == 0 {
				continue
			}
			err = nil
		}
		return n, err
	}
}

func (c *tunnelConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.ws.WriteMessage(websocket.BinaryMessage, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *tunnelConn) Close() error {
	c.closing.Do(func() {
		msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")
		_ = c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
		c.err = c.ws.Close()
	})
	return c.err
}

func (c *tunnelConn) LocalAddr() net.Addr  { return c.ws.LocalAddr() }
func (c *tunnelConn) RemoteAddr() net.Addr { return c.ws.RemoteAddr() }
func (c *tunnelConn) SetDeadline(t time.Time) error {
	return errors.Join(c.ws.SetReadDeadline(t), c.ws.SetWriteDeadline(t))
}
func (c *tunnelConn) SetReadDeadline(t time.Time) error  { return c.ws.SetReadDeadline(t) }
func (c *tunnelConn) SetWriteDeadline(t time.Time) error { return c.ws.SetWriteDeadline(t) }
