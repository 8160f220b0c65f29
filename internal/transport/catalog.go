package transport

import (
	"fmt"
	"slices"
	"strings"
)

// This file is crisp's protocol catalogue: every subprotocol a CRI streaming
// server may speak, the calls it serves, what it can carry, and the orders
// --transport tries them in. It is data: negotiation (ExecOffers,
// PortForwardOffers), probe's matrix and capability checks are all derived
// from it, so adding a protocol is one entry here plus its executor.

// Call is one of the three CRI calls that hand out a streaming URL.
type Call string

// The streaming calls.
const (
	CallExec        Call = "exec"
	CallAttach      Call = "attach"
	CallPortForward Call = "port-forward"
)

// The remote-command subprotocols of exec and attach, newest first. SPDY
// carries v1..v5; WebSocket servers speak v5, v4 and channel.k8s.io (v1) in
// a binary framing, and base64.channel.k8s.io and v4.base64.channel.k8s.io
// in a text (base64) framing.
const (
	ExecProtocolV5       = "v5.channel.k8s.io"
	ExecProtocolV4       = "v4.channel.k8s.io"
	ExecProtocolV3       = "v3.channel.k8s.io"
	ExecProtocolV2       = "v2.channel.k8s.io"
	ExecProtocolV1       = "channel.k8s.io"
	ExecProtocolV4Base64 = "v4.base64.channel.k8s.io"
	ExecProtocolBase64   = "base64.channel.k8s.io"
)

// Port-forward subprotocols, as offered in X-Stream-Protocol-Version (SPDY)
// or Sec-WebSocket-Protocol (the tunnel and the direct WebSocket protocol).
const (
	// PortForwardSPDY is SPDY/3.1 with one data and one error stream per
	// forwarded connection, all on one connection.
	PortForwardSPDY = "portforward.k8s.io"
	// PortForwardTunnel is the same SPDY protocol tunnelled in one WebSocket.
	PortForwardTunnel = "SPDY/3.1+portforward.k8s.io"
	// PortForwardWebSocket is the direct WebSocket protocol CRI streaming
	// servers speak: one WebSocket per forwarded connection, per port a data
	// channel 2i and an error channel 2i+1, each opened by the port as 2
	// little-endian bytes. It cannot forward a half-close.
	PortForwardWebSocket = "v4.channel.k8s.io"
	// PortForwardWebSocketBase64 is PortForwardWebSocket with base64 text frames.
	PortForwardWebSocketBase64 = "v4.base64.channel.k8s.io"
)

// ExecProtocols lists every exec/attach subprotocol SPDY carries, newest
// first: what `--transport spdy` offers at once.
var ExecProtocols = []string{ExecProtocolV5, ExecProtocolV4, ExecProtocolV3, ExecProtocolV2, ExecProtocolV1}

// Protocol is one transport and one subprotocol.
type Protocol struct {
	Transport Transport `json:"transport"`
	Name      string    `json:"protocol"`
}

// String is "spdy v5.channel.k8s.io": the transport as --transport names it.
func (p Protocol) String() string { return string(p.Transport) + " " + p.Name }

// Capabilities says what a protocol can carry.
type Capabilities struct {
	// ExitCode: the remote exit code arrives as a structured status (v4+);
	// older remote-command protocols carry an error text only.
	ExitCode bool
	// StdinEOF: the client can close the remote stdin (SPDY half-close from
	// v2 on, WebSocket v5's CLOSE signal).
	StdinEOF bool
	// Resize: terminal sizes can be sent.
	Resize bool
	// HalfClose (port-forward): a local end of input reaches the remote
	// port while its answer can still be read.
	HalfClose bool
	// Multiplexed (port-forward): one upgraded connection carries any number
	// of forwarded connections to any port; otherwise every forwarded
	// connection needs its own URL and handshake.
	Multiplexed bool
}

// Framing is how a protocol puts streams on the wire.
type Framing string

// The framings.
const (
	// FramingSPDY: SPDY/3.1 streams on an upgraded HTTP connection.
	FramingSPDY Framing = "spdy"
	// FramingSPDYTunnel: SPDY/3.1 streams inside one WebSocket.
	FramingSPDYTunnel Framing = "spdy-tunnel"
	// FramingBinary: WebSocket binary messages whose first byte is the channel.
	FramingBinary Framing = "binary"
	// FramingBase64: WebSocket text messages whose first byte is the channel
	// as an ASCII digit and whose rest is base64.
	FramingBase64 Framing = "base64"
)

// Spec is one catalogue entry.
type Spec struct {
	Protocol
	// Calls are the CRI calls whose URLs speak it.
	Calls []Call
	// Version is the remote-command protocol version (1..5); 0 for
	// port-forward.
	Version int
	Framing Framing
	Caps    Capabilities
}

// Serves reports whether the protocol carries call.
func (s Spec) Serves(call Call) bool { return slices.Contains(s.Calls, call) }

var remoteCommand = []Call{CallExec, CallAttach}
var portForward = []Call{CallPortForward}

// catalogue lists every protocol, in the order probe reports them: SPDY
// v1..v5, the WebSocket remote-command family, then port-forward's.
var catalogue = []Spec{
	// SPDY v1 has no way to end stdin: the stream is reset, never
	// half-closed, at the end of the session.
	{Protocol{SPDY, ExecProtocolV1}, remoteCommand, 1, FramingSPDY, Capabilities{}},
	{Protocol{SPDY, ExecProtocolV2}, remoteCommand, 2, FramingSPDY, Capabilities{StdinEOF: true}},
	{Protocol{SPDY, ExecProtocolV3}, remoteCommand, 3, FramingSPDY, Capabilities{StdinEOF: true, Resize: true}},
	{Protocol{SPDY, ExecProtocolV4}, remoteCommand, 4, FramingSPDY, Capabilities{ExitCode: true, StdinEOF: true, Resize: true}},
	{Protocol{SPDY, ExecProtocolV5}, remoteCommand, 5, FramingSPDY, Capabilities{ExitCode: true, StdinEOF: true, Resize: true}},
	// channel.k8s.io over WebSocket: crisp speaks it through client-go's v1
	// handler, which sends no terminal sizes.
	{Protocol{WebSocket, ExecProtocolV1}, remoteCommand, 1, FramingBinary, Capabilities{}},
	// Servers read sizes on channel 4 for every framing; crisp's base64
	// executor sends them.
	{Protocol{WebSocket, ExecProtocolBase64}, remoteCommand, 1, FramingBase64, Capabilities{Resize: true}},
	{Protocol{WebSocket, ExecProtocolV4}, remoteCommand, 4, FramingBinary, Capabilities{ExitCode: true, Resize: true}},
	{Protocol{WebSocket, ExecProtocolV4Base64}, remoteCommand, 4, FramingBase64, Capabilities{ExitCode: true, Resize: true}},
	{Protocol{WebSocket, ExecProtocolV5}, remoteCommand, 5, FramingBinary, Capabilities{ExitCode: true, StdinEOF: true, Resize: true}},

	{Protocol{SPDY, PortForwardSPDY}, portForward, 0, FramingSPDY, Capabilities{HalfClose: true, Multiplexed: true}},
	{Protocol{WebSocket, PortForwardTunnel}, portForward, 0, FramingSPDYTunnel, Capabilities{HalfClose: true, Multiplexed: true}},
	{Protocol{WebSocket, PortForwardWebSocket}, portForward, 0, FramingBinary, Capabilities{}},
	{Protocol{WebSocket, PortForwardWebSocketBase64}, portForward, 0, FramingBase64, Capabilities{}},
}

// Catalogue returns every protocol crisp knows, in report order.
func Catalogue() []Spec { return slices.Clone(catalogue) }

// Protocols lists the protocols that serve call, in report order.
func Protocols(call Call) []Protocol {
	var out []Protocol
	for _, s := range catalogue {
		if s.Serves(call) {
			out = append(out, s.Protocol)
		}
	}
	return out
}

// Lookup finds the catalogue entry of p for call.
func Lookup(call Call, p Protocol) (Spec, bool) {
	for _, s := range catalogue {
		if s.Protocol == p && s.Serves(call) {
			return s, true
		}
	}
	return Spec{}, false
}

// CapabilitiesOf is what p can carry for call (nothing when unknown).
func CapabilitiesOf(call Call, p Protocol) Capabilities {
	s, _ := Lookup(call, p)
	return s.Caps
}

// Step is one step of a --transport order: one handshake offering Offer,
// named as reports and messages name it.
type Step struct {
	Offer
	Name string
}

var (
	stepWSv5   = Step{Offer{WebSocket, []string{ExecProtocolV5}}, "WebSocket " + ExecProtocolV5}
	stepSPDY   = Step{Offer{SPDY, ExecProtocols}, "SPDY v5..v1"}
	stepWSv4   = Step{Offer{WebSocket, []string{ExecProtocolV4}}, "WebSocket " + ExecProtocolV4}
	stepPFSPDY = Step{Offer{SPDY, []string{PortForwardSPDY}}, "SPDY " + PortForwardSPDY}
	stepTunnel = Step{Offer{WebSocket, []string{PortForwardTunnel}}, PortForwardTunnel + " tunnel"}
	stepDirect = Step{Offer{WebSocket, []string{PortForwardWebSocket, PortForwardWebSocketBase64}}, "WebSocket " + PortForwardWebSocket + " (direct)"}
)

// orders are the --transport plans. Exec and attach: auto tries WebSocket
// v5 (the only WebSocket version that can close stdin), then SPDY offering
// v5..v1, then WebSocket v4; websocket tries v5 then v4 (never v5 alone:
// runtimes built on cri-streaming speak v4 only); spdy offers v5..v1.
// Port-forward: auto tries SPDY, then the SPDY-in-WebSocket tunnel, then
// the direct WebSocket protocol; websocket the last two; spdy the first.
var orders = map[Call]map[Transport][]Step{
	CallExec: {
		Auto:      {stepWSv5, stepSPDY, stepWSv4},
		WebSocket: {stepWSv5, stepWSv4},
		SPDY:      {stepSPDY},
	},
	CallPortForward: {
		Auto:      {stepPFSPDY, stepTunnel, stepDirect},
		WebSocket: {stepTunnel, stepDirect},
		SPDY:      {stepPFSPDY},
	},
}

// Order is the plan --transport t makes for call, one step per handshake
// (each with a fresh URL).
func Order(call Call, t Transport) ([]Step, error) {
	if call == CallAttach {
		call = CallExec
	}
	if t == "" {
		t = Auto
	}
	steps, ok := orders[call][t]
	if !ok {
		return nil, fmt.Errorf("unknown transport %q: want auto, websocket or spdy", t)
	}
	out := make([]Step, len(steps))
	for i, s := range steps {
		out[i] = Step{Offer{s.Transport, slices.Clone(s.Protocols)}, s.Name}
	}
	return out, nil
}

// PickAuto applies --transport auto's order for call to the protocols a
// server accepted (each tried alone): the first step with an accepted
// protocol, and among a step's protocols the first accepted, as the server
// would pick. ok is false when auto has nothing to use.
func PickAuto(call Call, accepted func(Protocol) bool) (Protocol, Step, bool) {
	steps, _ := Order(call, Auto)
	for _, s := range steps {
		for _, name := range s.Protocols {
			if p := (Protocol{s.Transport, name}); accepted(p) {
				return p, s, true
			}
		}
	}
	return Protocol{}, Step{}, false
}

// ParseExecProtocol accepts a remote-command subprotocol name or the short
// form of a SPDY version (v1..v5).
func ParseExecProtocol(s string) (string, error) {
	for _, spec := range catalogue {
		if !spec.Serves(CallExec) {
			continue
		}
		if s == spec.Name || spec.Framing == FramingSPDY && s == fmt.Sprintf("v%d", spec.Version) {
			return spec.Name, nil
		}
	}
	var names []string
	for _, p := range Protocols(CallExec) {
		if !slices.Contains(names, p.Name) {
			names = append(names, p.Name)
		}
	}
	return "", fmt.Errorf("unknown exec/attach protocol %q: want one of %s (or v5..v1)", s, strings.Join(names, ", "))
}

// carriers lists the transports of the catalogue that carry the
// remote-command subprotocol name.
func carriers(name string) []Transport {
	var ts []Transport
	for _, p := range Protocols(CallExec) {
		if p.Name == name {
			ts = append(ts, p.Transport)
		}
	}
	return ts
}

// ExecOffers is the negotiation plan for exec and attach: the catalogue's
// order for t. A non-empty pin offers exactly that subprotocol on every
// transport of the choice that can carry it (auto: WebSocket first, then
// SPDY).
func ExecOffers(t Transport, pin string) ([]Offer, error) {
	if pin == "" {
		steps, err := Order(CallExec, t)
		if err != nil {
			return nil, err
		}
		offers := make([]Offer, len(steps))
		for i, s := range steps {
			offers[i] = s.Offer
		}
		return offers, nil
	}
	p, err := ParseExecProtocol(pin)
	if err != nil {
		return nil, err
	}
	var family []Transport
	switch t {
	case Auto, "":
		family = []Transport{WebSocket, SPDY}
	case WebSocket, SPDY:
		family = []Transport{t}
	default:
		return nil, fmt.Errorf("unknown transport %q", t)
	}
	can := carriers(p)
	var offers []Offer
	for _, tr := range family {
		if slices.Contains(can, tr) {
			offers = append(offers, Offer{tr, []string{p}})
		}
	}
	if len(offers) == 0 {
		var names []string
		for _, q := range Protocols(CallExec) {
			if q.Transport == t {
				names = append(names, q.Name)
			}
		}
		other := SPDY
		if t == SPDY {
			other = WebSocket
		}
		return nil, fmt.Errorf("--transport %s carries only %s, not %s; use --transport %s for it", t, strings.Join(names, ", "), p, other)
	}
	return offers, nil
}

// PortForwardOffers is the negotiation plan for port-forward: the
// catalogue's order for t, every offer one handshake with a fresh URL.
func PortForwardOffers(t Transport) ([]Offer, error) {
	steps, err := Order(CallPortForward, t)
	if err != nil {
		return nil, err
	}
	offers := make([]Offer, len(steps))
	for i, s := range steps {
		offers[i] = s.Offer
	}
	return offers, nil
}
