// Package probe owns crisp's diagnostics: the protocol matrix (probe), the CI
// battery (smoke) and the throughput and latency figures (bench). It returns
// reports as data (structs with json tags); cmd/crisp prints them. It reaches
// the runtime through two small interfaces, URLs (the CRI calls that hand out
// streaming URLs) and Streamer (one attempt offering exactly one protocol),
// so it knows neither gRPC dialing nor cobra, and tests can fake both.
package probe

// Call is one of the three CRI streaming calls.
type Call string

// The streaming calls probe, smoke and bench exercise.
const (
	CallExec        Call = "exec"
	CallAttach      Call = "attach"
	CallPortForward Call = "port-forward"
)

// Subprotocol names as offered in the upgrade request.
const (
	ProtoV1          = "channel.k8s.io"
	ProtoV2          = "v2.channel.k8s.io"
	ProtoV3          = "v3.channel.k8s.io"
	ProtoV4          = "v4.channel.k8s.io"
	ProtoV5          = "v5.channel.k8s.io"
	ProtoBase64      = "base64.channel.k8s.io"
	ProtoV4Base64    = "v4.base64.channel.k8s.io"
	ProtoPortForward = "portforward.k8s.io"
	ProtoPFTunnel    = "SPDY/3.1+portforward.k8s.io"
)

// Protocol is one transport and one subprotocol, offered alone.
type Protocol struct {
	Transport Transport `json:"transport"`
	Name      string    `json:"protocol"`
}

func (p Protocol) String() string { return string(p.Transport) + " " + p.Name }

// Capabilities says what a subprotocol can carry, so a check it cannot
// carry is skipped (with the reason) rather than failed.
type Capabilities struct {
	// ExitCode: the remote exit code arrives as a structured status (v4+);
	// older protocols carry an error text only.
	ExitCode bool
	// StdinEOF: the client can close stdin (SPDY half-close, WebSocket v5 CLOSE).
	StdinEOF bool
	// Resize: terminal sizes can be sent.
	Resize bool
}

// CapabilitiesOf returns what p can carry for exec and attach.
func CapabilitiesOf(p Protocol) Capabilities {
	switch p.Transport {
	case SPDY:
		switch p.Name {
		case ProtoV1:
			// v1 has no way to end stdin: the stream is reset, never
			// half-closed, at the end of the session.
			return Capabilities{}
		case ProtoV2:
			return Capabilities{StdinEOF: true}
		case ProtoV3:
			return Capabilities{StdinEOF: true, Resize: true}
		}
		return Capabilities{ExitCode: true, StdinEOF: true, Resize: true}
	case WebSocket:
		switch p.Name {
		case ProtoV5:
			return Capabilities{ExitCode: true, StdinEOF: true, Resize: true}
		case ProtoV4, ProtoV4Base64:
			return Capabilities{ExitCode: true, Resize: true}
		case ProtoBase64:
			// Servers read sizes on channel 4 for every framing; probe's
			// own base64 client sends them.
			return Capabilities{Resize: true}
		}
		// channel.k8s.io: crisp speaks it through client-go's v1 handler,
		// which sends no terminal sizes.
		return Capabilities{}
	}
	return Capabilities{}
}

// Why a capability is missing, in the words reports use.
func (c Capabilities) missing(what string, p Protocol) string {
	switch what {
	case "exit-code":
		return p.String() + " carries no exit code, only an error text"
	case "stdin-eof":
		if p.Transport == WebSocket {
			return p.String() + " cannot close stdin (only WebSocket v5.channel.k8s.io can)"
		}
		return p.String() + " cannot close stdin (SPDY v2 and later can)"
	case "resize":
		return p.String() + " cannot carry terminal sizes (SPDY v3 and later and the other WebSocket framings can)"
	}
	return p.String() + " cannot carry " + what
}

// StreamProtocols lists what probe offers, one at a time, for exec and
// attach: SPDY v1..v5, then the WebSocket family.
func StreamProtocols() []Protocol {
	return []Protocol{
		{SPDY, ProtoV1},
		{SPDY, ProtoV2},
		{SPDY, ProtoV3},
		{SPDY, ProtoV4},
		{SPDY, ProtoV5},
		{WebSocket, ProtoV1},
		{WebSocket, ProtoBase64},
		{WebSocket, ProtoV4},
		{WebSocket, ProtoV4Base64},
		{WebSocket, ProtoV5},
	}
}

// ForwardProtocols lists what probe offers, one at a time, for
// port-forward: SPDY, the SPDY-in-WebSocket tunnel, and the direct
// WebSocket protocols.
func ForwardProtocols() []Protocol {
	return []Protocol{
		{SPDY, ProtoPortForward},
		{WebSocket, ProtoPFTunnel},
		{WebSocket, ProtoV4},
		{WebSocket, ProtoV4Base64},
	}
}

// Matrix lists every call with the protocols probe tries for it, in the
// order reports show them.
func Matrix() []MatrixRow {
	return []MatrixRow{
		{CallExec, StreamProtocols()},
		{CallAttach, StreamProtocols()},
		{CallPortForward, ForwardProtocols()},
	}
}

// MatrixRow is one call and the protocols probe offers for it.
type MatrixRow struct {
	Call      Call
	Protocols []Protocol
}

// AutoChoice is what --transport auto ends up using: the first step of
// DESIGN.md's order that the runtime accepts.
type AutoChoice struct {
	Protocol
	// Step is the fallback step as DESIGN.md names it.
	Step string `json:"step"`
}

// PickAuto applies the --transport auto order to the set of accepted
// protocols for call. ok is false when auto has nothing to use.
func PickAuto(call Call, accepted func(Protocol) bool) (AutoChoice, bool) {
	if call == CallPortForward {
		for _, c := range []AutoChoice{
			{Protocol{SPDY, ProtoPortForward}, "SPDY portforward.k8s.io"},
			{Protocol{WebSocket, ProtoPFTunnel}, "SPDY/3.1+portforward.k8s.io tunnel"},
			{Protocol{WebSocket, ProtoV4}, "WebSocket v4.channel.k8s.io (direct)"},
		} {
			if accepted(c.Protocol) {
				return c, true
			}
		}
		return AutoChoice{}, false
	}
	if p := (Protocol{WebSocket, ProtoV5}); accepted(p) {
		return AutoChoice{p, "WebSocket v5.channel.k8s.io"}, true
	}
	// SPDY offers v5..v1 together; the server picks the highest it speaks.
	for _, name := range []string{ProtoV5, ProtoV4, ProtoV3, ProtoV2, ProtoV1} {
		if p := (Protocol{SPDY, name}); accepted(p) {
			return AutoChoice{p, "SPDY v5..v1"}, true
		}
	}
	if p := (Protocol{WebSocket, ProtoV4}); accepted(p) {
		return AutoChoice{p, "WebSocket v4.channel.k8s.io"}, true
	}
	return AutoChoice{}, false
}

// Transport is a protocol family; the values are those of --transport (and
// of internal/transport's Transport).
type Transport string

// The two families probe tries.
const (
	SPDY      Transport = "spdy"
	WebSocket Transport = "websocket"
)
