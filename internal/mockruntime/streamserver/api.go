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
//
// What a Backend can rely on:
//   - in, out and errOut are nil when the request has no stdin, stdout or
//     stderr, except on the WebSocket protocols cri-streaming serves, which
//     pass channels that read EOF and discard writes (as on containerd).
//     The Backend need not close out or errOut.
//   - ctx ends when Stop or Close runs. A client that goes away shows as
//     EOF on in and as write errors, not as ctx's end (as on containerd).
//     PortForward's ctx also ends when its client connection's session
//     ends, except under cri-streaming without drop-after, where
//     cri-streaming gives no way to tell the session.
//   - resize is nil when the protocol has no resize stream, and is closed
//     when the client's resize stream ends.
//   - PortForward owns stream: it should return once either side is done
//     and may close stream; an error it returns is written to the
//     forwarded connection's error stream, as cri-streaming does.
type Backend interface {
	Exec(ctx context.Context, containerID string, cmd []string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommandserver.TerminalSize) error
	Attach(ctx context.Context, containerID string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommandserver.TerminalSize) error
	PortForward(ctx context.Context, podSandboxID string, port int32, stream io.ReadWriteCloser) error
}

// Profile names a set of protocols the server speaks (the mock's profile table;
// Profile.Protocols lists them).
//
// cri-streaming is served entirely by k8s.io/cri-streaming's server, so its
// answers are containerd's and CRI-O's to the byte (a refused WebSocket gets
// a 403 with an empty body, as x/net/websocket writes it). The other
// profiles negotiate against their table, write a 403 naming what they
// accept, and serve each protocol cri-streaming implements with its
// exported handlers; remote command v5 and the port-forward tunnel are
// served by this package.
type Profile string

// The profiles.
const (
	ProfileFull         Profile = "full"
	ProfileCRIStreaming Profile = "cri-streaming"
	ProfileConmonRS     Profile = "conmon-rs"
	ProfileLegacy       Profile = "legacy"
)

// Profiles lists every profile: full first, then the narrower ones.
var Profiles = []Profile{ProfileFull, ProfileCRIStreaming, ProfileConmonRS, ProfileLegacy}

// Config configures a streaming server.
type Config struct {
	// Addr is the listen address; it must be a loopback address
	// ("127.0.0.1:0" when empty; "localhost" means 127.0.0.1).
	Addr string
	// Profile is the protocol set (default full).
	Profile Profile
	// Faults are injected failures; at most one of each kind.
	Faults []Fault
	// TLS, when set, makes the server speak https/wss.
	TLS *tls.Config
	// URLAddr, when set, is the host:port the URLs name instead of the
	// listen address: a proxy in front of the server (as a runtime whose
	// advertised streaming address is a load balancer's). Tests put one
	// there to fail the connections they choose.
	URLAddr string
	// StreamIdleTimeout closes idle streams (default 4h, as containerd).
	StreamIdleTimeout time.Duration
	// StreamCreationTimeout bounds how long a SPDY client may take to open
	// its streams after the upgrade (default 30s, as cri-streaming). A SPDY
	// exec or attach client that upgrades and goes away without opening its
	// streams holds a cri-streaming handler (and so Close) that long:
	// tests may want it shorter.
	StreamCreationTimeout time.Duration
}

// Server hands out single-use streaming URLs and serves them.
//
// URLs are http(s)://ADDR/{exec,attach,portforward}/TOKEN. A token lives a
// minute and is consumed by the first request that presents it, whatever
// becomes of that request (a refused upgrade included); an unknown, reused
// or expired token gets 404. Tokens survive Stop/Start. Get* fail with
// Unavailable before the first Start while the port is still to be chosen,
// and after Close.
type Server interface {
	GetExec(*runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error)
	GetAttach(*runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error)
	GetPortForward(*runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error)
	// Addr is the host:port the server listens on.
	Addr() string
	// Stop closes the listener and cuts every open connection, then ends
	// every backend call's context (a runtime killed mid-session: no final
	// status reaches a client). It does not wait for backend calls.
	Stop() error
	// Start listens (again, on the same address after a Stop) and serves
	// in the background. Start on a serving server does nothing.
	Start() error
	// Close stops the server for good and waits for its goroutines and
	// for every backend call, which must return once its context ends or
	// its streams fail.
	Close() error
}

// Fault is one injected failure, parsed from --fault by ParseFault.
//
//   - drop-after=BYTES: once BYTES of stream payload (stdout and stderr, or
//     a forwarded connection's data, server to client) have gone to the
//     client on one connection, that connection is cut; exactly BYTES
//     arrive. A tunnel counts all its forwarded connections together.
//   - delay=DURATION: every upgrade is answered DURATION late.
//   - refuse-upgrade: every upgrade gets 403 with the reason; the token is
//     consumed.
//   - kill-stream-server-after=DURATION: Stop runs DURATION after the first
//     Start (once; a later Start serves on).
//   - restart-stream-server-after=DURATION: DURATION after the first
//     streaming session began, Stop and then Start at once on the same
//     address (restart.go).
//   - reset-forward-conn=N: the Nth forwarded connection of the server's
//     life (counting from 1, over every port-forward session and transport)
//     is reset before anything is dialled: its error stream carries the
//     reason and its data stream is closed (reset on SPDY).
//   - refuse-conn-one-in=N: each TCP connection the streaming server
//     accepts is reset at once, before a byte is read, with probability
//     1/N: the sporadic refusal a loaded streaming server or a flaky path
//     gives (random, so that it falls on every kind of connection alike).
//   - withhold-status: every exec runs, its stdout and stderr end, and its
//     exit status never comes (nor the session's end) until the client
//     leaves or the server stops: what a runtime that lost the process does.
type Fault struct {
	// Kind is drop-after, delay, refuse-upgrade, kill-stream-server-after,
	// restart-stream-server-after, reset-forward-conn, refuse-conn-one-in or
	// withhold-status.
	Kind     string
	Bytes    int64         // drop-after
	Duration time.Duration // delay, kill-stream-server-after
	N        int           // reset-forward-conn, refuse-conn-one-in
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
