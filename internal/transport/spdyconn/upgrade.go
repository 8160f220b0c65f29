package spdyconn

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"

	"k8s.io/streaming/pkg/httpstream"
	streamspdy "k8s.io/streaming/pkg/httpstream/spdy"
)

// Upgrade sends req through rt asking to switch to SPDY/3.1: rt dials
// (proxies, TLS) and writes the request; the answer is read here through br,
// which New then reads on from, so nothing sent past the answer is lost. A
// context that ends while the answer is awaited closes the connection. The
// caller closes conn unless it hands it to New.
func Upgrade(rt *streamspdy.SpdyRoundTripper, req *http.Request) (net.Conn, *bufio.Reader, *http.Response, error) {
	req = req.Clone(req.Context())
	req.Header = req.Header.Clone()
	req.Header.Set(httpstream.HeaderConnection, httpstream.HeaderUpgrade)
	req.Header.Set(httpstream.HeaderUpgrade, streamspdy.HeaderSpdy31)
	conn, err := rt.Dial(req) // Dial, not RoundTrip: the round tripper would keep the connection to itself
	if err != nil {
		return nil, nil, nil, err
	}
	stop := context.AfterFunc(req.Context(), func() { _ = conn.Close() })
	br := bufio.NewReaderSize(conn, 4<<10)
	resp, err := http.ReadResponse(br, req)
	stop()
	if err != nil {
		_ = conn.Close() // the attempt failed: its error is what matters
		return nil, nil, nil, fmt.Errorf("reading the SPDY upgrade answer: %w", err)
	}
	return conn, br, resp, nil
}

// Switched reports whether resp switched the connection to SPDY/3.1.
func Switched(resp *http.Response) bool {
	return resp.StatusCode == http.StatusSwitchingProtocols &&
		strings.Contains(strings.ToLower(resp.Header.Get(httpstream.HeaderUpgrade)), strings.ToLower(streamspdy.HeaderSpdy31))
}
