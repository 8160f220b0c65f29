package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Port-forward subprotocols, as offered in X-Stream-Protocol-Version (SPDY)
// or Sec-WebSocket-Protocol (the tunnel and the direct WebSocket protocol).
const (
	// PortForwardSPDY is SPDY/3.1 with one data and one error stream per
	// forwarded connection, all on one connection.
	PortForwardSPDY = "portforward.k8s.io"
	// PortForwardTunnel is the same SPDY protocol tunnelled in one WebSocket.
	PortForwardTunnel = "SPDY/3.1+portforward.k8s.io"
	// PortForwardWebSocket is the direct WebSocket protocol CRI streaming
	// servers speak: one WebSocket per forwarded connection, per port a data
	// channel 2i and an error channel 2i+1, each opened by the port as 2
	// little-endian bytes. It cannot forward a half-close.
	PortForwardWebSocket = "v4.channel.k8s.io"
	// PortForwardWebSocketBase64 is PortForwardWebSocket with base64 text frames.
	PortForwardWebSocketBase64 = "v4.base64.channel.k8s.io"
)

// PortForwardKind is how a port-forward subprotocol reaches the server.
type PortForwardKind int

// The three ways to forward ports.
const (
	KindUnknown PortForwardKind = iota
	// KindSPDY upgrades an HTTP POST to SPDY/3.1.
	KindSPDY
	// KindTunnel upgrades to a WebSocket that carries SPDY/3.1.
	KindTunnel
	// KindWebSocket upgrades to a channel WebSocket, one per connection.
	KindWebSocket
)

func (k PortForwardKind) String() string {
	switch k {
	case KindSPDY:
		return "SPDY"
	case KindTunnel:
		return "SPDY over WebSocket"
	case KindWebSocket:
		return "WebSocket"
	}
	return "unknown"
}

// PortForwardKindOf tells which kind of connection a subprotocol needs.
func PortForwardKindOf(protocol string) PortForwardKind {
	switch protocol {
	case PortForwardSPDY:
		return KindSPDY
	case PortForwardTunnel:
		return KindTunnel
	case PortForwardWebSocket, PortForwardWebSocketBase64:
		return KindWebSocket
	}
	return KindUnknown
}

// portForwardOrder is the auto order of DESIGN.md, one entry per attempt
// (each attempt with a fresh URL).
var portForwardOrder = [...][]string{
	{PortForwardSPDY},
	{PortForwardTunnel},
	{PortForwardWebSocket, PortForwardWebSocketBase64},
}

// PortForwardAttempts lists, for a --transport value, the subprotocol sets
// crisp offers in order, one handshake (and one fresh URL) per set.
func PortForwardAttempts(t Transport) [][]string {
	var out [][]string
	for _, protos := range portForwardOrder {
		kind := PortForwardKindOf(protos[0])
		switch {
		case t == SPDY && kind != KindSPDY:
			continue
		case t == WebSocket && kind == KindSPDY:
			continue
		}
		out = append(out, append([]string(nil), protos...))
	}
	return out
}

// Upgrade records one handshake: what was offered and how the server
// answered. Probe and bench report it as data.
type Upgrade struct {
	URL     string
	Kind    PortForwardKind
	Offered []string
	// Protocol is the negotiated subprotocol; empty when refused.
	Protocol string
	// Status is the HTTP status of the answer (101 when upgraded); 0 when
	// no answer arrived (dial or TLS failure).
	Status int
	// Reason is the server's explanation of a refusal (response body,
	// trimmed and bounded).
	Reason string
	// Latency is the time from sending the request to an upgraded
	// connection (or to the refusal).
	Latency time.Duration
}

// Accepted reports whether the server upgraded the connection.
func (u Upgrade) Accepted() bool {
	return u.Status == http.StatusSwitchingProtocols && u.Protocol != ""
}

// UpgradeRefusedError is returned when the server answered the handshake but
// did not upgrade: it does not speak what was offered, or the URL's token
// was already used.
type UpgradeRefusedError struct {
	Upgrade Upgrade
}

func (e *UpgradeRefusedError) Error() string {
	u := e.Upgrade
	status := http.StatusText(u.Status)
	msg := fmt.Sprintf("%s %s refused %s (HTTP %d %s)", u.Kind, u.URL, strings.Join(u.Offered, ", "), u.Status, status)
	if u.Reason != "" {
		msg += ": " + u.Reason
	}
	return msg
}

// RemoteError is the runtime's message on a forwarded connection's error
// stream (or channel): typically nothing listening on the remote port.
type RemoteError struct {
	Port    uint16
	Message string
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("runtime reported for remote port %d: %s", e.Port, e.Message)
}

// errSessionLost marks a failure to open streams because the connection to
// the streaming server is gone; the forwarder re-establishes it.
var errSessionLost = errors.New("connection to the streaming server was lost")

// ForwardConn is one forwarded connection to a port of the pod: bytes
// written reach the remote port, bytes read come from it. Read returns
// io.EOF when the remote side closed cleanly, or a *RemoteError when the
// runtime reported a failure for this connection.
type ForwardConn interface {
	io.ReadWriteCloser
	// CloseWrite half-closes: the remote port sees end of input and its
	// reply can still be read. With the direct WebSocket protocol, which
	// cannot carry a half-close, it does nothing and returns
	// ErrHalfCloseUnsupported.
	CloseWrite() error
	// RemotePort is the pod port this connection reaches.
	RemotePort() uint16
}

// ErrHalfCloseUnsupported is returned by CloseWrite on the direct WebSocket
// protocol; the connection stays open until the remote side closes.
var ErrHalfCloseUnsupported = errors.New("WebSocket v4 port-forward cannot forward a half-close; the connection stays open until the remote side closes")

// ForwardSession is an upgraded connection to a runtime's port-forward URL.
// Over SPDY and the tunnel it carries any number of forwarded connections to
// any port; over the direct WebSocket protocol it carries one connection per
// port named when it was dialled, and each port can be opened once.
type ForwardSession interface {
	// Open starts one forwarded connection to the remote port.
	Open(ctx context.Context, port uint16) (ForwardConn, error)
	// Protocol is the negotiated subprotocol.
	Protocol() string
	// Done is closed when the underlying connection is gone.
	Done() <-chan struct{}
	// Close tears the session and all its forwarded connections down.
	Close() error
}

// ConnectPortForward makes exactly one handshake with rawURL, offering
// protocols (all of one kind), and returns the upgraded session with a record
// of the handshake. Ports are needed by the direct WebSocket protocol only:
// they go into the URL's query, one channel pair each. A refusal returns a
// *UpgradeRefusedError; the Upgrade is filled in on every path.
func ConnectPortForward(ctx context.Context, rawURL string, ports []uint16, cfg Config, protocols ...string) (ForwardSession, Upgrade, error) {
	up := Upgrade{URL: rawURL, Offered: append([]string(nil), protocols...)}
	if len(protocols) == 0 {
		return nil, up, errors.New("port-forward: no subprotocol to offer")
	}
	up.Kind = PortForwardKindOf(protocols[0])
	for _, p := range protocols[1:] {
		if PortForwardKindOf(p) != up.Kind {
			return nil, up, fmt.Errorf("port-forward: cannot offer %q and %q in one handshake", protocols[0], p)
		}
	}
	switch up.Kind {
	case KindSPDY:
		return connectSPDY(ctx, up, cfg)
	case KindTunnel:
		return connectTunnel(ctx, up, cfg)
	case KindWebSocket:
		if len(ports) == 0 {
			return nil, up, errors.New("port-forward: the WebSocket protocol needs the remote ports in the URL; none given")
		}
		return connectWebSocket(ctx, up, ports, cfg)
	}
	return nil, up, fmt.Errorf("port-forward: unknown subprotocol %q (want %s, %s, %s or %s)",
		protocols[0], PortForwardSPDY, PortForwardTunnel, PortForwardWebSocket, PortForwardWebSocketBase64)
}

// pfReadReason reads a refusal's body, bounded, for messages.
func pfReadReason(r io.Reader) string {
	if r == nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(r, 4096))
	return strings.TrimSpace(string(b))
}
