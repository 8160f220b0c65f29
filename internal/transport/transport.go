// Package transport turns a CRI streaming URL into streams: the SPDY and
// WebSocket executors for exec and attach, the port-forwarders, protocol
// negotiation with fallback (a fresh URL per attempt, since CRI streaming
// URLs are single use), and frame tracing. It knows URLs and streams, not
// gRPC or cobra.
package transport

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/crisp-cri/crisp/internal/tracefile"
)

// Transport is a family of streaming protocols.
type Transport string

// The transports a user can ask for with --transport.
const (
	Auto      Transport = "auto"
	SPDY      Transport = "spdy"
	WebSocket Transport = "websocket"
)

// ParseTransport validates a --transport value.
func ParseTransport(s string) (Transport, error) {
	switch t := Transport(strings.ToLower(s)); t {
	case Auto, SPDY, WebSocket:
		return t, nil
	case "":
		return Auto, nil
	}
	return "", fmt.Errorf("unknown transport %q: want auto, websocket or spdy", s)
}

// URLSource makes one fresh streaming URL: one CRI Exec, Attach or
// PortForward RPC. Every negotiation attempt calls it again because the
// runtime's tokens are single use.
type URLSource func(ctx context.Context) (string, error)

// Config is what every transport needs besides the URL.
type Config struct {
	// TLS configures https/wss URLs; nil means system roots, verified.
	TLS *tls.Config
	// Logf receives -v diagnostics (negotiated protocol, fallbacks); nil
	// discards them.
	Logf func(format string, args ...any)
	// Trace receives one line per frame (-vv): direction, channel, size,
	// time. nil disables tracing.
	Trace io.Writer
	// TraceFile receives the same frames with their payloads, and the
	// handshakes, as JSON lines (--trace-file); nil records nothing.
	TraceFile *tracefile.Writer
	// Warnf receives what the user must see whatever the verbosity (for
	// example that stdin's end cannot reach the remote process on the
	// negotiated protocol); nil discards it.
	Warnf func(format string, args ...any)
	// UpgradeTimeout bounds each attempt's dial and upgrade handshake (not
	// the session that follows); zero means no bound but the context's.
	UpgradeTimeout time.Duration
}

func (c Config) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}

func (c Config) warnf(format string, args ...any) {
	if c.Warnf != nil {
		c.Warnf(format, args...)
	}
}
