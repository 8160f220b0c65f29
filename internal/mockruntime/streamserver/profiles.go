package streamserver

import (
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

// Protocols returns the protocol set of p (the mock's profile table).
func (p Profile) Protocols() (Protocols, bool) {
	switch p {
	case ProfileFull:
		return Protocols{
			RemoteCommandSPDY:      []string{protoV5, protoV4, protoV3, protoV2, protoV1},
			RemoteCommandWebSocket: []string{protoV1, wsBase64, wsV4, wsV4B64, protoV5},
			PortForwardSPDY:        []string{pfSPDY},
			PortForwardWebSocket:   []string{wsV4, wsV4B64, pfTunnel},
			AcceptsNoSubprotocol:   true,
		}, true
	case ProfileCRIStreaming:
		return Protocols{
			RemoteCommandSPDY:      append([]string(nil), remotecommandserver.SupportedStreamingProtocols...),
			RemoteCommandWebSocket: []string{protoV1, wsBase64, wsV4, wsV4B64},
			PortForwardSPDY:        []string{pfSPDY},
			PortForwardWebSocket:   []string{wsV4, wsV4B64},
			AcceptsNoSubprotocol:   true,
		}, true
	case ProfileConmonRS:
		return Protocols{
			RemoteCommandWebSocket: []string{protoV5},
			PortForwardWebSocket:   []string{pfTunnel},
		}, true
	case ProfileLegacy:
		return Protocols{
			RemoteCommandSPDY: []string{protoV2, protoV1},
			PortForwardSPDY:   []string{pfSPDY},
		}, true
	}
	return Protocols{}, false
}

// webSocketChoices is a WebSocket subprotocol list with "" added when the
// profile serves clients that offer none.
func (p Protocols) webSocketChoices(list []string) []string {
	if !p.AcceptsNoSubprotocol || len(list) == 0 {
		return list
	}
	return append([]string{noSubprot}, list...)
}
