// Package streamserver is the mock runtime's streaming server: the HTTP
// endpoint that CRI Exec, Attach and PortForward URLs point at. It serves the
// protocol set of one profile (full, cri-streaming, conmon-rs, legacy), hands
// out single-use tokens, and injects faults for reliability tests. It runs
// processes through a Backend and knows nothing of gRPC or of crisp's client.
package streamserver

import (
	"context"
	"crypto/tls"
	"io"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"
)

// Backend runs what a stream asks for; the mock runtime implements it with
// host processes. Exit codes are reported as k8s.io/utils/exec.ExitError.
type Backend interface {
	Exec(ctx context.Context, containerID string, cmd []string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommandserver.TerminalSize) error
	Attach(ctx context.Context, containerID string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommandserver.TerminalSize) error
	PortForward(ctx context.Context, podSandboxID string, port int32, stream io.ReadWriteCloser) error
}

// Profile names a set of protocols the server speaks (DESIGN.md's table).
type Profile string

// The profiles.
const (
	ProfileFull         Profile = "full"
	ProfileCRIStreaming Profile = "cri-streaming"
	ProfileConmonRS     Profile = "conmon-rs"
	ProfileLegacy       Profile = "legacy"
)

// Profiles lists every profile, in DESIGN.md's order.
var Profiles = []Profile{ProfileFull, ProfileCRIStreaming, ProfileConmonRS, ProfileLegacy}

// Config configures a streaming server.
type Config struct {
	// Addr is the listen address; it must be a loopback address
	// ("127.0.0.1:0" when empty).
	Addr    string
	Profile Profile
	Faults  []Fault
	// TLS, when set, makes the server speak https/wss.
	TLS *tls.Config
	// StreamIdleTimeout closes idle streams (default 4h, as containerd).
	StreamIdleTimeout time.Duration
	// StreamCreationTimeout bounds how long a SPDY client may take to open
	// its streams after the upgrade (default 30s, as cri-streaming).
	StreamCreationTimeout time.Duration
}

// Server hands out single-use streaming URLs and serves them.
type Server interface {
	GetExec(*runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error)
	GetAttach(*runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error)
	GetPortForward(*runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error)
	// Addr is the host:port the server listens on.
	Addr() string
	// Stop closes the listener and every open stream (a runtime killed
	// mid-session); Start serves again on the same address.
	Stop() error
	Start() error
	// Close stops the server for good and waits for its goroutines.
	Close() error
}

// Fault is one injected failure, parsed from --fault by ParseFault.
type Fault struct {
	// Kind is drop-after, delay, refuse-upgrade, kill-stream-server-after or
	// reset-forward-conn.
	Kind     string
	Bytes    int64         // drop-after
	Duration time.Duration // delay, kill-stream-server-after
	N        int           // reset-forward-conn
}

// ParseFault parses KIND[=VALUE], e.g. drop-after=1000, delay=200ms,
// refuse-upgrade, kill-stream-server-after=2s, reset-forward-conn=3.
func ParseFault(s string) (Fault, error) {
	return parseFault(s)
}

// New builds a server for cfg; Start makes it listen. It fails on an
// unknown profile, an invalid fault or a listen address that is not
// loopback. Get* calls before the first Start fail with Unavailable when
// the port is still to be chosen (Addr ":0").
func New(cfg Config, backend Backend) (Server, error) {
	return newServer(cfg, backend)
}
