package transport

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// This file is crisp's protocol catalogue: every subprotocol a CRI streaming
// server may speak, the calls it serves, its version, framing and what it
// can carry. It is data: the orders --transport tries (order.go), "newest
// first", which protocols can close stdin, negotiation (ExecOffers,
// PortForwardOffers), probe's matrix and capability checks are all derived
// from its rows, so adding a protocol is one row here plus its executor.

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

// catalogue lists every protocol, in report order (reportOrder: the order
// probe reports them): SPDY v1..v5, the WebSocket remote-command family,
// then port-forward's.
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

// ExecProtocols lists every exec/attach subprotocol SPDY carries, newest
// first: what `--transport spdy` offers at once. It is derived from the
// catalogue (and follows AddForTest); callers must not modify it.
var ExecProtocols = execProtocols()

func execProtocols() []string { return Names(Newest(CallExec, SPDY, nil)) }

// framingOrder is the order reports list the framings of one version in.
var framingOrder = []Framing{FramingSPDY, FramingSPDYTunnel, FramingBinary, FramingBase64}

// reportOrder is the catalogue's order: remote command before
// port-forward, SPDY before WebSocket, then oldest version first, then
// framing (binary before base64).
func reportOrder(a, b Spec) int {
	group := func(s Spec) int {
		if s.Serves(CallPortForward) {
			return 1
		}
		return 0
	}
	transportRank := func(s Spec) int {
		if s.Transport == SPDY {
			return 0
		}
		return 1
	}
	return cmp.Or(
		cmp.Compare(group(a), group(b)),
		cmp.Compare(transportRank(a), transportRank(b)),
		cmp.Compare(a.Version, b.Version),
		cmp.Compare(slices.Index(framingOrder, a.Framing), slices.Index(framingOrder, b.Framing)),
	)
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

// Newest lists the rows of transport t that serve call and that keep
// accepts (every one when keep is nil), newest version first; rows of one
// version keep report order.
func Newest(call Call, t Transport, keep func(Spec) bool) []Spec {
	var out []Spec
	for _, s := range catalogue {
		if s.Transport == t && s.Serves(call) && (keep == nil || keep(s)) {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b Spec) int { return cmp.Compare(b.Version, a.Version) })
	return out
}

// Carrying lists the exec/attach protocols of transport t that carry what
// has asks for, newest first: Carrying(WebSocket, CanCloseStdin) is the
// WebSocket versions that can close stdin.
func Carrying(t Transport, has func(Capabilities) bool) []Spec {
	return Newest(CallExec, t, func(s Spec) bool { return has(s.Caps) })
}

// CanCloseStdin is the stdin-eof capability, for Carrying.
func CanCloseStdin(c Capabilities) bool { return c.StdinEOF }

// CanResize is the resize capability, for Carrying.
func CanResize(c Capabilities) bool { return c.Resize }

// Names lists the rows' subprotocol names, in their order, each once.
func Names(specs []Spec) []string {
	var names []string
	for _, s := range specs {
		if !slices.Contains(names, s.Name) {
			names = append(names, s.Name)
		}
	}
	return names
}

// VersionSpan names rows of one transport by their versions, newest
// first: "v5..v1" for a run of several, "v5" for one.
func VersionSpan(specs []Spec) string {
	if len(specs) == 0 {
		return ""
	}
	newest, oldest := specs[0].Version, specs[len(specs)-1].Version
	if newest == oldest {
		return fmt.Sprintf("v%d", newest)
	}
	return fmt.Sprintf("v%d..v%d", newest, oldest)
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

// AddForTest adds rows to the catalogue, each at its place in report
// order, until the returned function removes them again: a test's way to
// see that everything derived from the catalogue follows a new protocol.
// Tests that call it must not run in parallel with others of their
// package.
func AddForTest(rows ...Spec) (remove func()) {
	saved, savedNames := catalogue, ExecProtocols
	catalogue = append(slices.Clone(catalogue), rows...)
	slices.SortStableFunc(catalogue, reportOrder)
	ExecProtocols = execProtocols()
	return func() { catalogue, ExecProtocols = saved, savedNames }
}

// ParseExecProtocol accepts a remote-command subprotocol name or the short
// form of a SPDY version ("v5").
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
	return "", fmt.Errorf("unknown exec/attach protocol %q: want one of %s (or %s)", s, strings.Join(names, ", "), VersionSpan(Newest(CallExec, SPDY, nil)))
}
