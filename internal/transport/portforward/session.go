package portforward

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"

	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/transport/spdyconn"
)

// pfKind is how an offer reaches the server.
type pfKind int

const (
	pfKindSPDY      pfKind = iota // HTTP POST upgraded to SPDY/3.1
	pfKindTunnel                  // WebSocket carrying SPDY/3.1
	pfKindWebSocket               // channel WebSocket, one per connection
)

func pfKindOf(o transport.Offer) (pfKind, error) {
	if len(o.Protocols) == 0 {
		return 0, errors.New("port-forward: no subprotocol to offer")
	}
	for _, p := range o.Protocols {
		ok := false
		switch o.Transport {
		case transport.SPDY:
			ok = p == transport.PortForwardSPDY
		case transport.WebSocket:
			ok = p == transport.PortForwardTunnel && len(o.Protocols) == 1 ||
				p == transport.PortForwardWebSocket || p == transport.PortForwardWebSocketBase64
		}
		if !ok {
			return 0, fmt.Errorf("port-forward: cannot offer %q over %s (SPDY carries %s; WebSocket carries %s alone, or %s and %s)",
				p, o.Transport.Title(), transport.PortForwardSPDY, transport.PortForwardTunnel, transport.PortForwardWebSocket, transport.PortForwardWebSocketBase64)
		}
	}
	switch {
	case o.Transport == transport.SPDY:
		return pfKindSPDY, nil
	case o.Protocols[0] == transport.PortForwardTunnel:
		return pfKindTunnel, nil
	}
	return pfKindWebSocket, nil
}

// pfOfferName names an offer in messages.
func pfOfferName(o transport.Offer) string {
	if len(o.Protocols) == 1 && o.Protocols[0] == transport.PortForwardTunnel {
		return "SPDY over WebSocket (" + transport.PortForwardTunnel + ")"
	}
	return o.String()
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
// io.EOF when the remote side closed, or a *RemoteError when the runtime
// reported a failure for this connection before the end was read.
type ForwardConn interface {
	io.ReadWriteCloser
	// RemoteError, once Read has returned, waits briefly for the runtime's
	// verdict on the connection: a *RemoteError when it reported a failure
	// (over SPDY the message travels on its own stream and can trail the
	// data's end), an error when the connection to the runtime was lost,
	// nil otherwise.
	RemoteError() error
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

// Connect makes exactly one handshake with rawURL for offer and
// returns the upgraded session with a record of the handshake (status,
// reason, negotiated protocol, upgrade latency; Attempt.Err is the error
// returned). Ports are needed by the direct WebSocket protocol only: they go
// into the URL's query, one channel pair each. A refusal is a *RefusedError.
func Connect(ctx context.Context, rawURL string, offer transport.Offer, ports []uint16, cfg transport.Config) (ForwardSession, transport.Attempt, error) {
	att := transport.Attempt{Offer: offer, URL: rawURL}
	kind, err := pfKindOf(offer)
	if err != nil {
		att.Err = err
		return nil, att, err
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		att.Err = fmt.Errorf("port-forward: the runtime returned a streaming URL crisp cannot use: %q (want http:// or https://)", rawURL)
		return nil, att, att.Err
	}
	cfg, tw := transport.WatchTLS(cfg, rawURL)
	parent := ctx
	ctx, bound, done := boundUpgrade(parent, cfg)
	defer done()
	var sess ForwardSession
	switch kind {
	case pfKindSPDY:
		sess, err = connectSPDY(ctx, &att, cfg)
	case pfKindTunnel:
		sess, err = connectTunnel(ctx, &att, cfg)
	case pfKindWebSocket:
		if len(ports) == 0 {
			err = errors.New("port-forward: the WebSocket protocol needs the remote ports in the URL; none given")
			break
		}
		sess, err = connectWebSocket(ctx, &att, u, ports, cfg)
	}
	if err != nil {
		var refused *transport.RefusedError
		switch {
		case errors.As(err, &refused):
		case errors.Is(err, spdyconn.ErrUnknownKind):
			err = fmt.Errorf("port-forward: %w", err)
		case parent.Err() != nil:
			err = parent.Err()
		case bound.expired():
			err = bound.err(parent, offer, att.URL, err)
		default:
			if tlsErr := tw.Describe(err); tlsErr.Error() != err.Error() {
				err = fmt.Errorf("port-forward: %w", tlsErr)
			} else if pfOutOfFiles(err) {
				// Not the server's fault: the report adds which limit.
				err = fmt.Errorf("port-forward: connecting to the runtime's streaming server at %s with %s: %w", att.URL, pfOfferName(offer), err)
			} else {
				err = fmt.Errorf("port-forward: connecting to the runtime's streaming server at %s with %s: %w; is the streaming server running and reachable from here?",
					att.URL, pfOfferName(offer), err)
			}
		}
		att.Err = err
		return nil, att, err
	}
	att.TLS = tw.Result()
	return sess, att, nil
}
