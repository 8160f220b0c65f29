// Package mockruntime is crisp's loopback CRI runtime: a CRI gRPC server on a
// unix socket whose containers are real host processes, whose pods share the
// host loopback, and whose streaming server (package streamserver) speaks the
// protocol set of a chosen profile. It shares no code with crisp's client
// side: a mock that shared the client's code would share its bugs.
package mockruntime

import (
	"context"
	"errors"

	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
)

// Config configures a mock runtime.
type Config struct {
	// Listen is the CRI endpoint, unix:///PATH (the socket is made 0600).
	Listen string
	// Profile selects the streaming protocols (default full).
	Profile streamserver.Profile
	// StreamAddr is the streaming server's loopback address (default 127.0.0.1:0).
	StreamAddr string
	Faults     []streamserver.Fault
	// Logf receives the mock's own diagnostics; nil discards them.
	Logf func(format string, args ...any)
}

// Runtime is a running mock runtime.
type Runtime struct{}

// Start serves the CRI API and the streaming server until Close.
func Start(ctx context.Context, cfg Config) (*Runtime, error) {
	return nil, errors.New("mockruntime: not built yet")
}

// Endpoint is the CRI endpoint (unix:///PATH).
func (r *Runtime) Endpoint() string { return "" }

// StreamServer gives tests control of the streaming server (stop, restart).
func (r *Runtime) StreamServer() streamserver.Server { return nil }

// Close ends every container and exec process, stops both servers and
// removes the socket.
func (r *Runtime) Close() error { return nil }
