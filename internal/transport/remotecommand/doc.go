// Package remotecommand runs exec and attach sessions on a CRI streaming URL:
// client-go's SPDY and WebSocket executors (wrapped so crisp sees each
// handshake), negotiation with fallback (a fresh URL per attempt, since CRI
// streaming URLs are single use), the wait for a pre-v4 protocol's final
// status, and frame tracing. Which protocols it offers, in which order, comes
// from internal/transport's catalogue.
package remotecommand
