package remotecommand

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	clientremotecommand "k8s.io/client-go/tools/remotecommand"
	clientspdy "k8s.io/client-go/transport/spdy"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/transport/liveness"
	"github.com/crisp-cri/crisp/internal/transport/spdyconn"
)

// spdyPingPeriod keeps idle sessions alive through NATs and proxies, as
// client-go does.
const spdyPingPeriod = 5 * time.Second

// headerProtocolVersion carries the offered and the negotiated subprotocol
// in a SPDY upgrade.
const headerProtocolVersion = "X-Stream-Protocol-Version"

// recorder learns what the server answered to one attempt, from inside the
// executor's round tripper: the status, the negotiated protocol, the upgrade
// latency, or the refusal.
type recorder struct {
	offer    transport.Offer
	url      string
	onAccept func(status int, protocol string, upgrade time.Duration) error

	mu       sync.Mutex
	conn     net.Conn // the attempt's connection, closed on an upgrade timeout
	ok       bool
	late     bool // the upgrade timed out: an answer now is ignored
	aborted  bool // the caller's context ended before the answer: likewise
	status   int
	reason   string
	upgrade  time.Duration
	dialedAt time.Time
	// status sees whether the server sent a final status (SPDY only).
	final statusWatch
	// peerBound is the liveness bound (transport.Config.PeerBound); peer
	// watches the attempt's connection with it once the session runs.
	peerBound time.Duration
	peer      *liveness.Conn
}

// startLiveness starts the watch of the session's connection with the
// protocol's ping (transport/liveness).
func (r *recorder) startLiveness(ping func() error) {
	r.mu.Lock()
	p := r.peer
	r.mu.Unlock()
	if p != nil {
		p.Start(ping)
	}
}

// peerDead is the *liveness.DeadPeerError that ended the session's
// connection, or nil.
func (r *recorder) peerDead() error {
	r.mu.Lock()
	p := r.peer
	r.mu.Unlock()
	return p.Err()
}

func (r *recorder) dialing() {
	r.mu.Lock()
	r.dialedAt = time.Now()
	r.mu.Unlock()
}

// timeOut marks the upgrade as timed out unless it was accepted already;
// it reports whether it did.
func (r *recorder) timeOut() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ok {
		return false
	}
	r.late = true
	if r.conn != nil {
		_ = r.conn.Close() // unblocks a handshake that reads no matter the context
	}
	return true
}

// abort ends a pending upgrade when the caller's context is done (a signal):
// the handshake libraries read the answer without watching the context, so
// only closing the connection under them returns at once. An accepted
// session is left to its executor, which watches the context itself.
func (r *recorder) abort() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ok {
		return
	}
	r.aborted = true
	if r.conn != nil {
		_ = r.conn.Close() // an error closing or writing here has nowhere better to go
	}
}

// dial opens the attempt's TCP connection and keeps it for timeOut.
func (r *recorder) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.late || r.aborted {
		_ = conn.Close() // an error closing or writing here has nowhere better to go
		if r.aborted {
			return nil, fmt.Errorf("dialing %s: %w", addr, context.Canceled)
		}
		return nil, fmt.Errorf("dialing %s: the upgrade timed out", addr)
	}
	// Beneath TLS and the protocol: the watch sees every byte that
	// arrives, and TCP_USER_TIMEOUT applies from the handshake on.
	r.peer = liveness.Wrap(conn, r.peerBound)
	r.conn = r.peer
	return r.peer, nil
}

func (r *recorder) timedOut() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.late
}

// accept records the upgrade. A non-nil error (a guard of guard.go) means
// the session must not start: the caller closes the connection and hands
// the error back to client-go.
func (r *recorder) accept(status int, protocol string) error {
	r.mu.Lock()
	if r.late || r.aborted {
		r.mu.Unlock()
		return nil // the attempt's context is cancelled: the session is over
	}
	r.ok, r.status, r.upgrade = true, status, time.Since(r.dialedAt)
	up := r.upgrade
	r.mu.Unlock()
	if r.onAccept != nil {
		return r.onAccept(status, protocol, up)
	}
	return nil
}

// refuse records a refusal and returns it as the error to hand back to
// client-go.
func (r *recorder) refuse(status int, reason string) error {
	r.mu.Lock()
	r.status, r.reason, r.upgrade = status, reason, time.Since(r.dialedAt)
	r.mu.Unlock()
	return &transport.RefusedError{Offer: r.offer, URL: r.url, Status: status, Reason: reason}
}

func (r *recorder) accepted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ok
}

// spdyUpgrader is both the round tripper and the upgrader of client-go's
// SPDY executor: it times the upgrade, reads the negotiated protocol, turns
// any answer but 101 into a RefusedError (k8s.io/streaming's own upgrader
// returns a plain error there, which no fallback could recognise), and runs
// the session on crisp's own SPDY connection (internal/transport/spdyconn).
// The upgrade itself is transport.UpgradeSPDY's, port-forward's too.
type spdyUpgrader struct {
	tlsCfg *tls.Config
	rec    *recorder
	// createTimeout bounds the wait for the server to accept each stream
	// (--request-timeout, as the upgrade).
	createTimeout time.Duration
	// kind is the SPDY connection to run on (spdyconn.Open).
	kind string

	conn net.Conn      // the upgraded connection, once answered
	br   *bufio.Reader // what the answer was read through
}

func (u *spdyUpgrader) RoundTrip(req *http.Request) (*http.Response, error) {
	u.rec.dialing()
	conn, br, resp, err := transport.UpgradeSPDY(req, u.tlsCfg, u.rec.dial)
	if err != nil {
		return nil, err
	}
	u.conn, u.br = conn, br
	transport.HideRedirect(resp) // redirect.go: net/http must not follow it
	return resp, nil
}

func (u *spdyUpgrader) NewConnection(resp *http.Response) (httpstream.Connection, error) {
	if resp.StatusCode != http.StatusSwitchingProtocols {
		reason := transport.RefusalReason(resp)
		_ = u.conn.Close() // refused: nothing more comes on it
		return nil, u.rec.refuse(resp.StatusCode, reason)
	}
	if !spdyconn.Switched(resp) {
		_ = u.conn.Close() // likewise
		return nil, u.rec.refuse(resp.StatusCode, "upgrade answer not usable: it switched to "+strconv.Quote(resp.Header.Get(httpstream.HeaderUpgrade))+", not SPDY/3.1")
	}
	protocol := resp.Header.Get(headerProtocolVersion)
	if protocol == "" {
		protocol = transport.ExecProtocolV1 // what client-go speaks when the server names none
	}
	if err := u.rec.accept(resp.StatusCode, protocol); err != nil {
		_ = u.conn.Close() // an error closing or writing here has nowhere better to go
		return nil, err
	}
	conn, err := spdyconn.Open(u.conn, u.br, spdyconn.Options{Kind: u.kind, PingPeriod: spdyPingPeriod, CreateTimeout: u.createTimeout})
	if err != nil {
		_ = u.conn.Close() // likewise
		return nil, err
	}
	u.rec.startLiveness(spdyconn.Pinger(conn))
	return u.rec.final.wrap(conn, protocol), nil
}

// newSPDYExecutor is client-go's SPDY executor offering exactly protocols.
func newSPDYExecutor(cfg transport.Config, u *url.URL, protocols []string, rec *recorder) (clientremotecommand.Executor, error) {
	// The dial is the recorder's, so an upgrade timeout can close the
	// connection under a handshake that never ends.
	up := &spdyUpgrader{tlsCfg: cfg.TLS, rec: rec, createTimeout: cfg.UpgradeTimeout, kind: cfg.SPDYConnection}
	return clientremotecommand.NewSPDYExecutorForProtocols(up, clientspdy.NewUpgraderForStreaming(up), http.MethodPost, u, protocols...)
}
