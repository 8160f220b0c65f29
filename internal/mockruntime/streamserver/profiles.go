package streamserver

import (
	"slices"

	"k8s.io/cri-streaming/pkg/streaming/portforward"
	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"
	"k8s.io/streaming/pkg/httpstream/wsstream"
)

// The subprotocol names the profiles speak.
const (
	protoV1   = remotecommandserver.StreamProtocolV1Name // channel.k8s.io
	protoV2   = remotecommandserver.StreamProtocolV2Name
	protoV3   = remotecommandserver.StreamProtocolV3Name
	protoV4   = remotecommandserver.StreamProtocolV4Name
	protoV5   = remotecommandserver.StreamProtocolV5Name
	wsBase64  = wsstream.Base64ChannelWebSocketProtocol // base64.channel.k8s.io
	wsV4      = "v4." + wsstream.ChannelWebSocketProtocol
	wsV4B64   = "v4." + wsstream.Base64ChannelWebSocketProtocol
	pfSPDY    = portforward.ProtocolV1Name                       // portforward.k8s.io
	pfTunnel  = portforward.WebsocketsSPDYTunnelingPortForwardV1 // SPDY/3.1+portforward.k8s.io
	noSubprot = ""                                               // a WebSocket client that offers none
)

// Endpoint is where a subprotocol is negotiated: the call's kind and the
// transport.
type Endpoint uint8

// The endpoints.
const (
	// RemoteCommandSPDY is exec/attach over SPDY (X-Stream-Protocol-Version).
	RemoteCommandSPDY Endpoint = iota
	// RemoteCommandWebSocket is exec/attach over WebSocket (Sec-WebSocket-Protocol).
	RemoteCommandWebSocket
	// PortForwardSPDY is port-forward over SPDY.
	PortForwardSPDY
	// PortForwardWebSocket is port-forward over WebSocket: the direct v4
	// channel protocols and the SPDY/3.1+portforward.k8s.io tunnel.
	PortForwardWebSocket
)

// ServedBy names the code that serves a negotiated subprotocol.
type ServedBy uint8

// The servers.
const (
	// ServedByLibrary: cri-streaming's exported handlers (ServeExec,
	// ServeAttach, ServePortForward), as containerd and CRI-O run them.
	ServedByLibrary ServedBy = iota
	// ServedAsV5: this package's remote command v5 (v5.go), which
	// cri-streaming lacks: the one that can close stdin over WebSocket.
	ServedAsV5
	// ServedAsTunnel: this package's SPDY-in-WebSocket port-forward
	// tunnel (tunnel.go), which cri-streaming lacks.
	ServedAsTunnel
)

// ProtocolRow is one row of the mock's protocol table: a subprotocol at
// one endpoint, the code that serves it, and the profiles that speak it.
// The mock shares no code with crisp's client, so this table is its own;
// a test outside both (internal/testsupport/layering) holds it against the
// client's catalogue.
type ProtocolRow struct {
	Name     string
	Endpoint Endpoint
	Server   ServedBy
	Profiles []Profile
}

var (
	fullCRI     = []Profile{ProfileFull, ProfileCRIStreaming}
	fullCRILgcy = []Profile{ProfileFull, ProfileCRIStreaming, ProfileLegacy}
	fullConmon  = []Profile{ProfileFull, ProfileConmonRS}
)

// protocolTable is the mock's one protocol table. Within an endpoint the
// rows are in each profile's order of preference (which 403s list); SPDY's
// newest first. full speaks every row; cri-streaming's column is what
// k8s.io/cri-streaming serves (a test holds it to the library's lists).
var protocolTable = []ProtocolRow{
	{protoV5, RemoteCommandSPDY, ServedAsV5, []Profile{ProfileFull}},
	{protoV4, RemoteCommandSPDY, ServedByLibrary, fullCRI},
	{protoV3, RemoteCommandSPDY, ServedByLibrary, fullCRI},
	{protoV2, RemoteCommandSPDY, ServedByLibrary, fullCRILgcy},
	{protoV1, RemoteCommandSPDY, ServedByLibrary, fullCRILgcy},

	{protoV1, RemoteCommandWebSocket, ServedByLibrary, fullCRI},
	{wsBase64, RemoteCommandWebSocket, ServedByLibrary, fullCRI},
	{wsV4, RemoteCommandWebSocket, ServedByLibrary, fullCRI},
	{wsV4B64, RemoteCommandWebSocket, ServedByLibrary, fullCRI},
	{protoV5, RemoteCommandWebSocket, ServedAsV5, fullConmon},

	{pfSPDY, PortForwardSPDY, ServedByLibrary, fullCRILgcy},

	{wsV4, PortForwardWebSocket, ServedByLibrary, fullCRI},
	{wsV4B64, PortForwardWebSocket, ServedByLibrary, fullCRI},
	{pfTunnel, PortForwardWebSocket, ServedAsTunnel, fullConmon},
}

// acceptsNoSubprotocol lists the profiles that serve a WebSocket client
// offering no subprotocol, as cri-streaming does.
var acceptsNoSubprotocol = fullCRI

// ProtocolTable returns the mock's protocol table.
func ProtocolTable() []ProtocolRow {
	out := slices.Clone(protocolTable)
	for i := range out {
		out[i].Profiles = slices.Clone(out[i].Profiles)
	}
	return out
}

// AddProtocolForTest adds rows to the table (after the rows of their
// endpoint) until the returned function removes them: a test's way to see
// that the profiles follow a new protocol. A server reads the table when
// it is created. Tests that call it must not run in parallel with others
// of their package.
func AddProtocolForTest(rows ...ProtocolRow) (remove func()) {
	saved := protocolTable
	table := slices.Clone(protocolTable)
	for _, r := range rows {
		at := len(table)
		for i := len(table) - 1; i >= 0; i-- {
			if table[i].Endpoint == r.Endpoint {
				at = i + 1
				break
			}
		}
		table = slices.Insert(table, at, r)
	}
	protocolTable = table
	return func() { protocolTable = saved }
}

// serverOf is the code that serves name at e in table (ok false when no
// row has it).
func serverOf(table []ProtocolRow, e Endpoint, name string) (ServedBy, bool) {
	for _, r := range table {
		if r.Endpoint == e && r.Name == name {
			return r.Server, true
		}
	}
	return 0, false
}

// Protocols is the protocol set of a profile: the subprotocols it accepts,
// by endpoint and transport, in its order of preference. A client that
// offers none of them gets 403.
type Protocols struct {
	// RemoteCommandSPDY is exec/attach over SPDY (X-Stream-Protocol-Version).
	RemoteCommandSPDY []string
	// RemoteCommandWebSocket is exec/attach over WebSocket (Sec-WebSocket-Protocol).
	RemoteCommandWebSocket []string
	// PortForwardSPDY is port-forward over SPDY.
	PortForwardSPDY []string
	// PortForwardWebSocket is port-forward over WebSocket: the direct
	// v4 channel protocols and the SPDY/3.1+portforward.k8s.io tunnel.
	PortForwardWebSocket []string
	// AcceptsNoSubprotocol says whether a WebSocket client that offers no
	// subprotocol is served (as channel.k8s.io / the v4 port-forward
	// channels), as cri-streaming does.
	AcceptsNoSubprotocol bool
}

// Protocols returns the protocol set of p: its column of the protocol table.
func (p Profile) Protocols() (Protocols, bool) {
	if !slices.Contains(Profiles, p) {
		return Protocols{}, false
	}
	column := func(e Endpoint, served ...ServedBy) []string {
		var names []string
		for _, r := range protocolTable {
			if r.Endpoint == e && slices.Contains(r.Profiles, p) && (len(served) == 0 || slices.Contains(served, r.Server)) {
				names = append(names, r.Name)
			}
		}
		return names
	}
	return Protocols{
		RemoteCommandSPDY:      column(RemoteCommandSPDY),
		RemoteCommandWebSocket: column(RemoteCommandWebSocket),
		PortForwardSPDY:        column(PortForwardSPDY),
		PortForwardWebSocket:   column(PortForwardWebSocket),
		AcceptsNoSubprotocol:   slices.Contains(acceptsNoSubprotocol, p),
	}, true
}

// webSocketChoices is a WebSocket subprotocol list with "" added when the
// profile serves clients that offer none.
func (p Protocols) webSocketChoices(list []string) []string {
	if !p.AcceptsNoSubprotocol || len(list) == 0 {
		return list
	}
	return append([]string{noSubprot}, list...)
}

// library keeps the names of list that cri-streaming's handlers serve at e.
func library(table []ProtocolRow, e Endpoint, list []string) []string {
	var out []string
	for _, name := range list {
		if s, ok := serverOf(table, e, name); ok && s == ServedByLibrary {
			out = append(out, name)
		}
	}
	return out
}
