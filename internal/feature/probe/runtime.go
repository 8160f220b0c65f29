package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/transport"
)

// URLs makes fresh streaming URLs: one CRI Exec, Attach or PortForward RPC
// per call, since runtimes hand out single-use tokens.
type URLs interface {
	Exec(ctx context.Context, req *runtimeapi.ExecRequest) (string, error)
	Attach(ctx context.Context, req *runtimeapi.AttachRequest) (string, error)
	PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (string, error)
}

// CRIURLs asks a runtime for streaming URLs through crisp's CRI client
// (its URL sources: one CRI call per URL).
type CRIURLs struct{ Client *client.Client }

// Exec implements URLs.
func (u CRIURLs) Exec(ctx context.Context, req *runtimeapi.ExecRequest) (string, error) {
	return u.Client.ExecSource("", req)(ctx)
}

// Attach implements URLs.
func (u CRIURLs) Attach(ctx context.Context, req *runtimeapi.AttachRequest) (string, error) {
	return u.Client.AttachSource("", req)(ctx)
}

// PortForward implements URLs.
func (u CRIURLs) PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (string, error) {
	ports := make([]uint16, 0, len(req.GetPort()))
	for _, p := range req.GetPort() {
		ports = append(ports, uint16(p)) // CRI ports are 1-65535
	}
	return u.Client.PortForwardSource("", req.GetPodSandboxId())(ctx, ports)
}

// TermSize is a terminal size in characters.
type TermSize struct{ Width, Height uint16 }

// Session is what one exec or attach stream carries. Nil streams are not
// requested from the runtime.
type Session struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	TTY            bool
	// Size, when set, is sent the moment the stream opens.
	Size *TermSize
	// Resize carries later sizes (with TTY and Size); the streamer sends
	// each as it arrives, until the session ends.
	Resize <-chan TermSize
	// CloseStdin: when Stdin ends, close the remote stdin (protocols that
	// cannot do it keep it open until the command exits).
	CloseStdin bool
}

// Handshake is the outcome of the HTTP upgrade of one attempt.
type Handshake struct {
	Accepted bool
	// Status and Reason are the HTTP answer to a refused upgrade (Status 0
	// when no HTTP answer came, e.g. connection refused).
	Status int
	Reason string
	// Negotiated is the subprotocol the server chose.
	Negotiated string
	// Upgrade is the time from sending the request to the upgraded stream.
	Upgrade time.Duration
	// TimedOut: no answer came in time (neither accepted nor refused).
	TimedOut bool
}

// Conn is one forwarded connection.
type Conn interface {
	io.ReadWriteCloser
	// CloseWrite half-closes where the protocol can; protocols that cannot
	// return an error saying so.
	CloseWrite() error
}

// Streamer makes attempts that offer exactly one protocol. Implemented on
// internal/transport by NewStreamer; tests fake it.
type Streamer interface {
	// Stream runs one exec or attach session on url. When the upgrade is
	// refused it returns a Handshake with Accepted false and an error
	// describing the refusal. Once accepted, the error is the session's:
	// nil, an error with ExitStatus() int for a non-zero exit, or a failure.
	Stream(ctx context.Context, url string, p Protocol, s Session) (Handshake, error)
	// Forward opens one forwarded connection to port. The caller closes
	// it; closing also ends the streaming connection.
	Forward(ctx context.Context, url string, p Protocol, port int32) (Handshake, Conn, error)
}

// exitStatus extracts a remote exit code from a session error. ok is false
// when err carries none.
func exitStatus(err error) (code int, ok bool) {
	if err == nil {
		return 0, true
	}
	var es transport.RemoteExit
	if errors.As(err, &es) {
		return es.ExitStatus(), true
	}
	return 0, false
}

// Target is what the diagnostics run against.
type Target struct {
	ContainerID string
	PodID       string
	// Port is a remote port for port-forward checks; 0 skips them.
	Port int32
	// Command overrides the exec probe's command.
	Command []string
}

func (t Target) validate() error {
	if t.ContainerID == "" {
		return fmt.Errorf("no container given")
	}
	return nil
}
