package remotecommand

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"

	gwebsocket "github.com/gorilla/websocket"
	restclient "k8s.io/client-go/rest"
	clientremotecommand "k8s.io/client-go/tools/remotecommand"
	clientws "k8s.io/client-go/transport/websocket"

	"github.com/crisp-cri/crisp/internal/transport"
)

// wsBufferSize matches client-go's WebSocket data buffer plus room for the
// channel byte.
const wsBufferSize = 32*1024 + 1024

// headerWebSocketProtocol is how client-go hands the offered subprotocols to
// its round tripper.
const headerWebSocketProtocol = "Sec-Websocket-Protocol"

// wsDialer replaces the dial of client-go's WebSocket round tripper (through
// rest.Config.WrapTransport) so that crisp sees the handshake: the status
// and body of a refusal, the chosen subprotocol and the upgrade latency. It
// stores the connection where client-go's executor looks for it.
type wsDialer struct {
	holder *clientws.RoundTripper
	cfg    transport.Config
	rec    *recorder
}

func (d *wsDialer) RoundTrip(req *http.Request) (*http.Response, error) {
	protocols := req.Header[headerWebSocketProtocol]
	header := req.Header.Clone()
	delete(header, headerWebSocketProtocol)
	u := *req.URL
	switch u.Scheme {
	case "https":
		u.Scheme = "wss"
	case "http":
		u.Scheme = "ws"
	}
	dialer := gwebsocket.Dialer{
		Proxy:           http.ProxyFromEnvironment,
		TLSClientConfig: d.cfg.TLS,
		Subprotocols:    protocols,
		ReadBufferSize:  wsBufferSize,
		WriteBufferSize: wsBufferSize,
		NetDialContext:  d.rec.dial,
	}
	var filter *wsStatusFilter // the connection's, once dialed
	{
		// statuswatch_ws.go: the filter holds v1's error channel and
		// bounds v2-v5's; it sits above TLS, so crisp does the TLS
		// handshake here as gorilla would (watchTLS's configuration
		// verifies the server in VerifyConnection).
		watch := &d.rec.final
		dialer.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := d.rec.dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			filter = newWSStatusFilter(conn, watch)
			return filter, nil
		}
		dialer.NetDialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := d.rec.dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			host, _, _ := net.SplitHostPort(addr)
			tc := tls.Client(conn, transport.UpgradeTLS(d.cfg.TLS, host))
			if err := tc.HandshakeContext(ctx); err != nil {
				_ = conn.Close() // an error closing or writing here has nowhere better to go
				return nil, err
			}
			filter = newWSStatusFilter(tc, watch)
			return filter, nil
		}
	}
	d.rec.dialing()
	conn, resp, err := dialer.DialContext(req.Context(), u.String(), header)
	if err != nil {
		if resp != nil {
			defer func() { _ = resp.Body.Close() }() // closing what was read reports nothing to act on
			return nil, d.rec.refuse(resp.StatusCode, transport.RefusalReason(resp))
		}
		if errors.Is(err, gwebsocket.ErrBadHandshake) {
			return nil, d.rec.refuse(0, err.Error())
		}
		return nil, err
	}
	if !slices.Contains(protocols, conn.Subprotocol()) {
		_ = conn.Close() // an error closing or writing here has nowhere better to go
		return nil, d.rec.refuse(resp.StatusCode, fmt.Sprintf("server switched protocols but chose subprotocol %q, not one of %q", conn.Subprotocol(), protocols))
	}
	if err := d.rec.accept(resp.StatusCode, conn.Subprotocol()); err != nil {
		_ = conn.Close() // an error closing or writing here has nowhere better to go
		return nil, err
	}
	d.holder.Conn = conn
	if filter != nil { // gorilla dialed through the filter (no proxy between)
		d.rec.startLiveness(filter.ping)
	}
	return resp, nil
}

// newWebSocketExecutor is client-go's WebSocket executor offering exactly
// protocols.
func newWebSocketExecutor(cfg transport.Config, rawURL string, protocols []string, rec *recorder) (clientremotecommand.Executor, error) {
	var wrapErr error
	rc := &restclient.Config{
		WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
			holder, ok := rt.(*clientws.RoundTripper)
			if !ok {
				wrapErr = fmt.Errorf("client-go's WebSocket round tripper is a %T, not *websocket.RoundTripper", rt)
				return rt
			}
			return &wsDialer{holder: holder, cfg: cfg, rec: rec}
		},
	}
	exec, err := clientremotecommand.NewWebSocketExecutorForProtocols(rc, http.MethodGet, rawURL, protocols...)
	if err == nil {
		err = wrapErr
	}
	return exec, err
}
