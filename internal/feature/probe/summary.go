package probe

import (
	"fmt"
	"strings"

	"github.com/crisp-cri/crisp/internal/transport"
)

// summarise computes auto's picks and the gaps that matter.
func summarise(rep *ProbeReport, p *Prober) Summary {
	var s Summary
	s.Gaps = []string{}
	for _, row := range Matrix() {
		if !p.wants(row.Call) {
			continue
		}
		accepted := func(pr Protocol) bool { return rep.Accepted(row.Call, pr) }
		choice, ok := PickAuto(row.Call, accepted)
		pick := AutoPick{Call: row.Call}
		if ok {
			pr := choice.Protocol
			pick.Protocol, pick.Step = &pr, choice.Step
		} else {
			pick.Why = nothingPicked(rep, row.Call)
		}
		s.Auto = append(s.Auto, pick)
		s.Gaps = append(s.Gaps, gaps(rep, row.Call, ok, choice, accepted)...)
	}
	return s
}

func gaps(rep *ProbeReport, call Call, ok bool, choice AutoChoice, accepted func(Protocol) bool) []string {
	var g []string
	timedOut := func(p Protocol) bool {
		for _, res := range rep.Results {
			if res.Call == call && res.Protocol == p {
				return res.TimedOut
			}
		}
		return false
	}
	var slow []string // protocols whose upgrade timed out: neither spoken nor refused
	for _, p := range transport.Protocols(call) {
		if timedOut(p) {
			slow = append(slow, p.String())
		}
	}
	if len(slow) > 0 {
		g = append(g, fmt.Sprintf("%s: %d upgrades got no answer in time (%s): crisp cannot tell whether the runtime speaks them; raise --attempt-timeout or see why its streaming server is slow", call, len(slow), strings.Join(slow, ", ")))
	}
	if !ok && len(slow) > 0 {
		return append(g, fmt.Sprintf("%s: nothing crisp's auto order can use was accepted in time; %s may fail or hang on this runtime", call, call))
	}
	if !ok {
		return append(g, fmt.Sprintf("%s: the runtime accepts nothing crisp's auto order can use; %s fails on this runtime", call, call))
	}
	wsProto := func(name string) Protocol { return Protocol{Transport: transport.WebSocket, Name: name} }
	ws := func(name string) bool { return accepted(wsProto(name)) }
	// unknown: the protocol timed out, so its absence proves nothing.
	unknown := func(name string) bool { return timedOut(wsProto(name)) }
	closers := transport.Carrying(transport.WebSocket, transport.CanCloseStdin)
	var closing, closingUnknown bool
	for _, s := range closers {
		closing = closing || ws(s.Name)
		closingUnknown = closingUnknown || unknown(s.Name)
	}
	anyWS, anyWSUnknown := false, false
	for _, p := range transport.Protocols(call) {
		anyWS = anyWS || p.Transport == transport.WebSocket && accepted(p)
		anyWSUnknown = anyWSUnknown || p.Transport == transport.WebSocket && timedOut(p)
	}
	direct := choice.Transport == transport.WebSocket && !capabilities(call, choice.Protocol).StdinEOF && !capabilities(call, choice.Protocol).HalfClose
	switch call {
	case CallExec, CallAttach:
		if len(closers) > 0 && !closing && !closingUnknown {
			g = append(g, fmt.Sprintf("%s: no WebSocket %s, so stdin EOF cannot be sent over WebSocket (clients that speak only %s, such as crictl --transport websocket, fail)",
				call, orList(closers), transport.VersionSpan(closers[len(closers)-1:])))
		}
		if !anyWS && !anyWSUnknown {
			g = append(g, fmt.Sprintf("%s: no WebSocket protocol at all; only SPDY clients work", call))
		}
		if !capabilities(call, choice.Protocol).ExitCode {
			g = append(g, fmt.Sprintf("%s: auto picks %s, which carries no exit code: crisp shows the error text and exits 1 unless it states the code", call, choice.Protocol))
		}
		if direct {
			g = append(g, fmt.Sprintf("%s: auto picks WebSocket %s, which cannot close stdin: `exec -i` of a command that waits for EOF hangs", call, choice.Name))
		}
	case CallPortForward:
		if !ws(transport.PortForwardTunnel) && !unknown(transport.PortForwardTunnel) {
			g = append(g, fmt.Sprintf("port-forward: no %s tunnel (clients that speak only the tunnel over WebSocket, such as crictl --transport websocket, fail)", transport.PortForwardTunnel))
		}
		if direct {
			g = append(g, fmt.Sprintf("port-forward: auto uses direct WebSocket %s: no half-close, one WebSocket per connection", choice.Name))
		}
	}
	for _, res := range rep.Results {
		if res.Call != call || !res.Accepted {
			continue
		}
		for _, c := range res.Checks {
			if c.Outcome == Fail {
				g = append(g, fmt.Sprintf("%s over %s: %s check failed: %s", call, res.Protocol, c.Name, c.Detail))
			}
		}
	}
	return g
}

// nothingPicked words why auto has nothing for call, from how its attempts
// ended: every one refused, every one timed out, or a mix (with counts).
func nothingPicked(rep *ProbeReport, call Call) string {
	counts := map[string]int{}
	total := 0
	for _, res := range rep.Results {
		if res.Call == call && !res.Accepted {
			counts[res.Kind()]++
			total++
		}
	}
	words := []struct{ kind, all, some string }{
		{"refused", "every step of the auto order was refused", "refused"},
		{"timeout", "no step of the auto order was answered in time", "timed out"},
		{"failed", "every step of the auto order failed before the server answered", "failed"},
	}
	var parts []string
	for _, w := range words {
		switch n := counts[w.kind]; n {
		case 0:
		case total:
			return w.all
		default:
			parts = append(parts, fmt.Sprintf("%d %s", n, w.some))
		}
	}
	if len(parts) == 0 {
		return "no step of the auto order was accepted"
	}
	return "no step of the auto order was accepted: " + strings.Join(parts, ", ")
}
