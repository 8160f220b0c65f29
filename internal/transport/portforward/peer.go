package portforward

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"

	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/transport/liveness"
)

// pfDialWatched dials as net.Dialer does and wraps the connection in a
// liveness watch with cfg's bound (transport/liveness: TCP_USER_TIMEOUT
// now, pings once the session starts it), leaving it in *peer.
func pfDialWatched(cfg transport.Config, peer **liveness.Conn) transport.DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		nc, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		*peer = liveness.Wrap(nc, cfg.PeerBound())
		return *peer, nil
	}
}

// lostErr is errSessionLost, with why when the liveness watch (or the
// kernel's TCP_USER_TIMEOUT) ended the connection.
func (s *spdySession) lostErr() error {
	if dead := s.peer.Err(); dead != nil {
		return fmt.Errorf("%w: %w", errSessionLost, dead)
	}
	return errSessionLost
}

// pfPeerOf finds the watched connection beneath nc (through TLS).
func pfPeerOf(nc net.Conn) *liveness.Conn {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	peer, _ := nc.(*liveness.Conn)
	return peer
}
