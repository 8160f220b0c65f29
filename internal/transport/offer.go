package transport

import (
	"slices"
	"strings"
	"time"
)

// Offer is one negotiation step: one connection on one transport offering
// protocols in preference order.
type Offer struct {
	Transport Transport // SPDY or WebSocket, never Auto
	Protocols []string
}

// String names the offer the way messages show it: "WebSocket
// v5.channel.k8s.io", and "SPDY v5..v1" for every SPDY version at once
// (the span is the catalogue's, newest first).
func (o Offer) String() string {
	name := o.Transport.Title()
	if o.Transport == SPDY && len(o.Protocols) > 1 && slices.Equal(o.Protocols, ExecProtocols) {
		return name + " " + VersionSpan(Newest(CallExec, SPDY, nil))
	}
	return name + " " + strings.Join(o.Protocols, ",")
}

// Attempt is what one negotiation step did: the URL it used, what the server
// answered, and how long it took.
type Attempt struct {
	Offer
	URL string
	// Status is the HTTP status of the upgrade response (101 when the
	// upgrade succeeded); 0 when no response arrived.
	Status int
	// Reason is the server's explanation of a refusal (status text and body).
	Reason string
	// Protocol is the negotiated subprotocol; empty unless accepted.
	Protocol string
	// RPC is how long the URL took to get (the Exec/Attach RPC); zero for Try.
	RPC time.Duration
	// Upgrade is the time from dialing to the upgraded connection.
	Upgrade time.Duration
	// TLS is what the TLS handshake showed (version, server certificate);
	// nil for a plaintext URL or when no handshake completed.
	TLS *TLSInfo
	// Err is why the attempt failed; nil when the upgrade succeeded (the
	// session's own outcome is returned separately).
	Err error
}

// Accepted reports whether the server upgraded the connection.
func (a Attempt) Accepted() bool { return a.Err == nil && a.Protocol != "" }

// Title is the transport's name in messages: "SPDY", "WebSocket".
func (t Transport) Title() string {
	switch t {
	case SPDY:
		return "SPDY"
	case WebSocket:
		return "WebSocket"
	}
	return string(t)
}
