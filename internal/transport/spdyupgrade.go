package transport

import (
	"bufio"
	"context"
	"crypto/tls"
	"net"
	"net/http"

	streamspdy "k8s.io/streaming/pkg/httpstream/spdy"

	"github.com/crisp-cri/crisp/internal/transport/spdyconn"
)

// The SPDY upgrade of exec, attach and port-forward alike, and the one TLS
// policy every upgrade to an https URL dials with.

// UpgradeTLS is the TLS configuration an upgrade to host dials with: base
// (nil: the system roots, verified) with SNI set to --tls-server-name when
// given, else the URL's host, and nothing older than TLS 1.2 whatever base
// allows. Every dial path gets the name from here: some libraries fill it
// in only when they verify the certificate themselves, which crisp's TLS
// watch does in their place.
func UpgradeTLS(base *tls.Config, host string) *tls.Config {
	c := &tls.Config{}
	if base != nil {
		c = base.Clone()
	}
	if c.ServerName == "" {
		c.ServerName = host
	}
	if c.MinVersion < tls.VersionTLS12 {
		c.MinVersion = tls.VersionTLS12
	}
	return c
}

// DialFunc opens a TCP connection (net.Dialer.DialContext's shape).
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// UpgradeSPDY sends req (its method, URL and X-Stream-Protocol-Version
// offers set by the caller) asking to switch to SPDY/3.1, over TLS
// (UpgradeTLS's policy, on tlsCfg) for an https URL. dial, when set, opens
// the connection, so the caller can close it under a handshake that never
// ends; without it the connection is dialled directly or through the
// environment's proxy. The answer is read through the returned reader,
// which the SPDY connection then reads on from (spdyconn.Open); the caller
// checks it (spdyconn.Switched, the negotiated protocol) and closes conn
// unless it opens a connection on it.
func UpgradeSPDY(req *http.Request, tlsCfg *tls.Config, dial DialFunc) (conn net.Conn, br *bufio.Reader, resp *http.Response, err error) {
	rtCfg := streamspdy.RoundTripperConfig{TLS: UpgradeTLS(tlsCfg, req.URL.Hostname())}
	if dial != nil {
		// An upgrade transport is only a dialer and a TLS configuration here.
		rtCfg = streamspdy.RoundTripperConfig{UpgradeTransport: &http.Transport{TLSClientConfig: rtCfg.TLS, DialContext: dial}}
	}
	rt, err := streamspdy.NewRoundTripperWithConfig(rtCfg)
	if err != nil {
		return nil, nil, nil, err
	}
	return spdyconn.Upgrade(rt, req)
}
