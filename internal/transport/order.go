package transport

import (
	"fmt"
	"slices"
	"strings"
)

// Step is one step of a --transport order: one handshake offering Offer,
// named as reports and messages name it.
type Step struct {
	Offer
	Name string
}

// stepRule is one step of --transport auto's plan, as a rule over the
// catalogue: the rows of one transport it offers (newest first, in one
// handshake) and how reports name the step. The rules are policy; the rows
// they pick are the catalogue's, so a new row lands in its step by what it
// can carry.
type stepRule struct {
	transport Transport
	picks     func(Spec) bool
	name      func(Offer) string
}

var (
	// WebSocket versions that can close stdin: auto's first choice, since
	// only they run `exec -i` of a command that waits for EOF.
	ruleWSClosing = stepRule{WebSocket, func(s Spec) bool { return s.Framing == FramingBinary && s.Caps.StdinEOF }, Offer.String}
	// Every SPDY version in one handshake: the server picks the newest it
	// speaks.
	ruleSPDY = stepRule{SPDY, func(Spec) bool { return true }, Offer.String}
	// WebSocket versions that carry an exit code but cannot close stdin:
	// what runtimes built on cri-streaming speak over WebSocket.
	ruleWSStatus = stepRule{WebSocket, func(s Spec) bool {
		return s.Framing == FramingBinary && s.Caps.ExitCode && !s.Caps.StdinEOF
	}, Offer.String}

	rulePFSPDY   = stepRule{SPDY, func(Spec) bool { return true }, Offer.String}
	rulePFTunnel = stepRule{WebSocket, func(s Spec) bool { return s.Framing == FramingSPDYTunnel }, func(o Offer) string {
		return strings.Join(o.Protocols, ",") + " tunnel"
	}}
	rulePFDirect = stepRule{WebSocket, func(s Spec) bool { return s.Framing != FramingSPDYTunnel && !s.Caps.Multiplexed }, func(o Offer) string {
		return "WebSocket " + o.Protocols[0] + " (direct)"
	}}
)

// autoRules are --transport auto's plans. Exec and attach: WebSocket that
// can close stdin (v5), then SPDY offering every version (v5..v1), then
// WebSocket with an exit code (v4). Port-forward: SPDY, then the
// SPDY-in-WebSocket tunnel, then the direct WebSocket protocol.
// --transport websocket and spdy keep auto's steps of their transport:
// websocket tries v5 then v4 (never v5 alone: runtimes built on
// cri-streaming speak v4 only).
var autoRules = map[Call][]stepRule{
	CallExec:        {ruleWSClosing, ruleSPDY, ruleWSStatus},
	CallPortForward: {rulePFSPDY, rulePFTunnel, rulePFDirect},
}

// Order is the plan --transport t makes for call, one step per handshake
// (each with a fresh URL), derived from the catalogue.
func Order(call Call, t Transport) ([]Step, error) {
	if call == CallAttach {
		call = CallExec
	}
	if t == "" {
		t = Auto
	}
	if t != Auto && t != WebSocket && t != SPDY {
		return nil, fmt.Errorf("unknown transport %q: want auto, websocket or spdy", t)
	}
	var steps []Step
	for _, r := range autoRules[call] {
		if t != Auto && r.transport != t {
			continue
		}
		rows := Newest(call, r.transport, r.picks)
		if len(rows) == 0 {
			continue
		}
		offer := Offer{r.transport, Names(rows)}
		steps = append(steps, Step{offer, r.name(offer)})
	}
	return steps, nil
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
