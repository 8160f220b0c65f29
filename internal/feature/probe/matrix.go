// Package probe owns crisp's diagnostics: the protocol matrix (probe), the CI
// battery (smoke) and the throughput and latency figures (bench). It returns
// reports as data (structs with json tags); cmd/crisp prints them. It reaches
// the runtime through two small interfaces, URLs (the CRI calls that hand out
// streaming URLs) and Streamer (one attempt offering exactly one protocol),
// so it knows neither gRPC dialing nor cobra, and tests can fake both. What
// it tries, and what each protocol can carry, comes from internal/transport's
// protocol catalogue.
package probe

import (
	"fmt"
	"strings"

	"github.com/crisp-cri/crisp/internal/transport"
)

// Call is one of the three CRI streaming calls.
type Call = transport.Call

// The streaming calls probe, smoke and bench exercise.
const (
	CallExec        = transport.CallExec
	CallAttach      = transport.CallAttach
	CallPortForward = transport.CallPortForward
)

// Protocol is one transport and one subprotocol, offered alone.
type Protocol = transport.Protocol

// Capabilities says what a subprotocol can carry, so a check it cannot
// carry is skipped (with the reason) rather than failed.
type Capabilities = transport.Capabilities

// capabilities returns what p can carry for call.
func capabilities(call Call, p Protocol) Capabilities { return transport.CapabilitiesOf(call, p) }

// missing words why p lacks a capability, in the words reports use; the
// protocols that have it are the catalogue's.
func missing(what string, p Protocol) string {
	switch what {
	case "exit-code":
		return p.String() + " carries no exit code, only an error text"
	case "stdin-eof":
		if p.Transport == transport.WebSocket {
			return fmt.Sprintf("%s cannot close stdin (only WebSocket %s can)", p, orList(transport.Carrying(transport.WebSocket, transport.CanCloseStdin)))
		}
		return fmt.Sprintf("%s cannot close stdin (%s can)", p, spdyFrom(transport.CanCloseStdin))
	case "resize":
		return fmt.Sprintf("%s cannot carry terminal sizes (%s and the other WebSocket framings can)", p, spdyFrom(transport.CanResize))
	case "half-close":
		return p.String() + " (direct WebSocket port-forward) cannot carry a half-close"
	}
	return p.String() + " cannot carry " + what
}

// orList names protocols "a or b", newest first.
func orList(specs []transport.Spec) string {
	return strings.Join(transport.Names(specs), " or ")
}

// spdyFrom is "SPDY v2 and later": the oldest SPDY version that has a
// capability (every newer one has it too).
func spdyFrom(has func(Capabilities) bool) string {
	can := transport.Carrying(transport.SPDY, has)
	if len(can) == 0 {
		return "no SPDY version"
	}
	return fmt.Sprintf("SPDY v%d and later", can[len(can)-1].Version)
}

// Matrix lists every call with the protocols probe tries for it, alone and
// in the order reports show them: the catalogue's.
func Matrix() []MatrixRow {
	calls := []Call{CallExec, CallAttach, CallPortForward}
	rows := make([]MatrixRow, len(calls))
	for i, c := range calls {
		rows[i] = MatrixRow{c, transport.Protocols(c)}
	}
	return rows
}

// MatrixRow is one call and the protocols probe offers for it.
type MatrixRow struct {
	Call      Call
	Protocols []Protocol
}

// AutoChoice is what --transport auto ends up using: the first step of its
// order that the runtime accepts.
type AutoChoice struct {
	Protocol
	// Step is the fallback step as the catalogue names it.
	Step string `json:"step"`
}

// PickAuto applies the --transport auto order to the set of accepted
// protocols for call. ok is false when auto has nothing to use.
func PickAuto(call Call, accepted func(Protocol) bool) (AutoChoice, bool) {
	p, step, ok := transport.PickAuto(call, accepted)
	if !ok {
		return AutoChoice{}, false
	}
	return AutoChoice{p, step.Name}, true
}
