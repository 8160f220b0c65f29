package probe

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/transport"
)

// protocolV6 is a made-up v6 with v5's capabilities, on both transports.
const protocolV6 = "v6.channel.k8s.io"

// addV6 adds the v6 rows to transport's catalogue for the test.
func addV6(t *testing.T) {
	t.Helper()
	caps := Capabilities{ExitCode: true, StdinEOF: true, Resize: true}
	calls := []Call{CallExec, CallAttach}
	t.Cleanup(transport.AddForTest(
		transport.Spec{Protocol: Protocol{Transport: transport.SPDY, Name: protocolV6}, Calls: calls, Version: 6, Framing: transport.FramingSPDY, Caps: caps},
		transport.Spec{Protocol: Protocol{Transport: transport.WebSocket, Name: protocolV6}, Calls: calls, Version: 6, Framing: transport.FramingBinary, Caps: caps},
	))
}

// TestNewRowReachesMatrixWordsAndGaps: a row added to the catalogue is in
// the matrix, in the words of a skipped check and in the summary's gaps.
func TestNewRowReachesMatrixWordsAndGaps(t *testing.T) {
	addV6(t)
	for _, row := range Matrix() {
		has := slices.Contains(row.Protocols, Protocol{Transport: transport.WebSocket, Name: protocolV6}) &&
			slices.Contains(row.Protocols, Protocol{Transport: transport.SPDY, Name: protocolV6})
		if has != (row.Call != CallPortForward) {
			t.Errorf("%s: v6 in the matrix is %t: %v", row.Call, has, row.Protocols)
		}
	}
	ws4 := Protocol{Transport: transport.WebSocket, Name: transport.ExecProtocolV4}
	if got := missing("stdin-eof", ws4); !strings.Contains(got, "only WebSocket "+protocolV6+" or "+transport.ExecProtocolV5+" can") {
		t.Errorf("stdin-eof skip reason: %q", got)
	}

	f := fakeProfile(t, "cri-streaming") // no WebSocket that can close stdin
	rep, err := (&Prober{URLs: f, Streamer: f, SkipChecks: true}).Run(context.Background(), Target{ContainerID: "c1", PodID: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	if !containsSub(rep.Summary.Gaps, "exec: no WebSocket "+protocolV6+" or "+transport.ExecProtocolV5+", so stdin EOF cannot") {
		t.Errorf("gaps %q do not name v6 and v5", rep.Summary.Gaps)
	}
}

// v5Wire speaks the test's v6 as v5 on the wire: client-go has no v6
// executor (a real new version is a row plus its executor), and the test's
// v6 carries what v5 carries. Everything above the wire (matrix, checks,
// auto's pick, reports) sees v6.
type v5Wire struct{ *fakeRuntime }

func (w v5Wire) Stream(ctx context.Context, u string, p Protocol, s Session) (Handshake, error) {
	asked := p
	if p.Name == protocolV6 {
		p.Name = transport.ExecProtocolV5
	}
	hs, err := w.fakeRuntime.Stream(ctx, u, p, s)
	if hs.Negotiated == p.Name {
		hs.Negotiated = asked.Name
	}
	return hs, err
}

// TestNewRowReachesSmokeOffersAndMock is the catalogue's promise end to
// end: a v6 row with v5's capabilities, added to the client's catalogue and
// to the mock's table, and probe's matrix, smoke's checks, auto's offer
// order and pick, and the mock's profile all follow it.
func TestNewRowReachesSmokeOffersAndMock(t *testing.T) {
	addV6(t)
	t.Cleanup(streamserver.AddProtocolForTest(
		streamserver.ProtocolRow{Name: protocolV6, Endpoint: streamserver.RemoteCommandSPDY, Server: streamserver.ServedAsV5, Profiles: []streamserver.Profile{streamserver.ProfileFull}},
		streamserver.ProtocolRow{Name: protocolV6, Endpoint: streamserver.RemoteCommandWebSocket, Server: streamserver.ServedAsV5, Profiles: []streamserver.Profile{streamserver.ProfileFull}},
	))
	ws6 := Protocol{Transport: transport.WebSocket, Name: protocolV6}
	spdy6 := Protocol{Transport: transport.SPDY, Name: protocolV6}

	offers, _ := transport.ExecOffers(transport.Auto, "")
	if !slices.Equal(offers[0].Protocols, []string{protocolV6, transport.ExecProtocolV5}) || offers[1].Protocols[0] != protocolV6 {
		t.Errorf("auto's offers: %v", offers)
	}
	full, _ := streamserver.ProfileFull.Protocols()
	if !slices.Contains(full.RemoteCommandSPDY, protocolV6) || !slices.Contains(full.RemoteCommandWebSocket, protocolV6) {
		t.Errorf("the mock's full profile: %+v", full)
	}

	f := fakeProfile(t, "full")
	w := v5Wire{f}
	rep, err := (&Prober{URLs: f, Streamer: w, Timeout: 5 * time.Second}).Run(context.Background(), Target{ContainerID: "c1", PodID: "p1", Port: f.echoPort})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Accepted(CallExec, ws6) || !rep.Accepted(CallAttach, spdy6) {
		t.Errorf("probe did not find v6 accepted")
	}
	if pick, _ := rep.Auto(CallExec); pick != ws6 {
		t.Errorf("auto picks %v, want WebSocket v6", pick)
	}

	srep, err := (&Smoker{URLs: f, Streamer: w, Timeout: 10 * time.Second}).Run(context.Background(), Target{ContainerID: "c1", PodID: "p1", Port: f.echoPort})
	if err != nil {
		t.Fatal(err)
	}
	ran := map[Protocol][]string{}
	for _, c := range srep.Checks {
		if c.Protocol != nil && c.Protocol.Name == protocolV6 {
			ran[*c.Protocol] = append(ran[*c.Protocol], c.Check.Name)
			if c.Outcome != Pass {
				t.Errorf("%s: %s %s", c.Name(), c.Outcome, c.Detail)
			}
			if c.Auto != (*c.Protocol == ws6) { // exec and attach share auto's order
				t.Errorf("%s: auto is %t", c.Name(), c.Auto)
			}
		}
	}
	for _, p := range []Protocol{ws6, spdy6} {
		want := append(registryNames(SuiteSmoke, CallExec), registryNames(SuiteSmoke, CallAttach)...)
		if !slices.Equal(ran[p], want) {
			t.Errorf("smoke ran %v on %s, want every exec and attach check %v", ran[p], p, want)
		}
	}
}
