// Package transport is what every streaming call shares: the protocol
// catalogue (names, calls, capabilities and the --transport orders, as
// data), Transport, Offer, Attempt and Config, the TLS configuration and
// verification, the upgrade's error types and the reading of exit codes from
// error texts. Exec and attach live in transport/remotecommand, port-forward
// in transport/portforward, as client-go splits them. It knows URLs and
// streams, not gRPC or cobra.
package transport

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/crisp-cri/crisp/internal/base/tracefile"
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
	// Protocols, when set, remembers the protocol each runtime accepted
	// (protocache.go); nil is no cache.
	Protocols *ProtocolCache
	// UpgradeTimeout bounds each attempt's dial and upgrade handshake (not
	// the session that follows); zero means no bound but the context's.
	UpgradeTimeout time.Duration
	// Upgraded, when set, hears that a session's upgrade was accepted, as
	// its streams start (attach --reconnect says it re-attached then).
	Upgraded func()
	// SPDYConnection picks the client SPDY connection sessions run on:
	// "crisp" for crisp's own, "spdystream" for k8s.io/streaming's (the way
	// back when a runtime misbehaves with crisp's); "" is $CRISP_SPDY, else
	// crisp's own (spdyconn.Open).
	SPDYConnection string
	// PeerTimeout bounds how long a session's peer may give no sign of
	// life (nothing received, pings unanswered, or what crisp sent left
	// unacknowledged) before crisp ends the session (transport/liveness):
	// 0 is DefaultPeerTimeout, negative no bound (--peer-timeout 0).
	PeerTimeout time.Duration
}

// DefaultPeerTimeout is the bound on a silent, unanswering peer when the
// caller names none (--peer-timeout's default).
const DefaultPeerTimeout = 60 * time.Second

// PeerBound is the liveness bound PeerTimeout gives: 0 for none.
func (c Config) PeerBound() time.Duration {
	switch {
	case c.PeerTimeout < 0:
		return 0
	case c.PeerTimeout == 0:
		return DefaultPeerTimeout
	}
	return c.PeerTimeout
}

// DefaultUpgradeTimeout bounds an upgrade handshake when the caller names
// no bound: as long as a CRI call gets by default
// (client.DefaultRequestTimeout, out of this layer's reach; a test in
// internal/feature/session keeps the two equal).
const DefaultUpgradeTimeout = 10 * time.Second

// ConfigOptions is what NewConfig builds a Config from.
type ConfigOptions struct {
	// TLS configures https/wss URLs (TLSOptions.Build); nil means system
	// roots, verified.
	TLS *tls.Config
	// UpgradeTimeout bounds each handshake (DefaultUpgradeTimeout if zero).
	UpgradeTimeout time.Duration
	// Verbose is the -v count: from LogLevel on, diagnostics go to Out;
	// from one level more, every frame too.
	Verbose int
	// LogLevel is the verbosity that shows diagnostics (1 if zero).
	LogLevel int
	// Warnings sends what the user must see whatever the verbosity to Out.
	Warnings bool
	// Out receives diagnostics, warnings and frames ("crisp: " lines); nil
	// discards them.
	Out io.Writer
}

// NewConfig is the one way commands build a Config, so exec, attach,
// port-forward, probe, smoke and bench share its timeouts and output.
func NewConfig(o ConfigOptions) Config {
	cfg := Config{TLS: o.TLS, UpgradeTimeout: o.UpgradeTimeout}
	if cfg.UpgradeTimeout <= 0 {
		cfg.UpgradeTimeout = DefaultUpgradeTimeout
	}
	if o.Out == nil {
		return cfg
	}
	level := max(o.LogLevel, 1)
	if o.Verbose >= level {
		cfg.Logf = func(format string, args ...any) { _, _ = fmt.Fprintf(o.Out, "crisp: "+format+"\n", args...) } // diagnostics on the error stream: a failed write has nowhere to go
	}
	if o.Verbose > level {
		cfg.Trace = o.Out
	}
	if o.Warnings {
		cfg.Warnf = func(format string, args ...any) { _, _ = fmt.Fprintf(o.Out, "crisp: warning: "+format+"\n", args...) }
	}
	return cfg
}

// Log sends a -v diagnostic to Logf, if set.
func (c Config) Log(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}

// Warn sends what the user must see to Warnf, if set.
func (c Config) Warn(format string, args ...any) {
	if c.Warnf != nil {
		c.Warnf(format, args...)
	}
}
