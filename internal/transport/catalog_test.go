package transport

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExecOffers(t *testing.T) {
	all := ExecProtocols
	tests := []struct {
		transport Transport
		pin       string
		want      []Offer
		wantErr   string
	}{
		{Auto, "", []Offer{{WebSocket, []string{ExecProtocolV5}}, {SPDY, all}, {WebSocket, []string{ExecProtocolV4}}}, ""},
		{WebSocket, "", []Offer{{WebSocket, []string{ExecProtocolV5}}, {WebSocket, []string{ExecProtocolV4}}}, ""},
		{SPDY, "", []Offer{{SPDY, all}}, ""},
		{Auto, "v4", []Offer{{WebSocket, []string{ExecProtocolV4}}, {SPDY, []string{ExecProtocolV4}}}, ""},
		{Auto, "v2.channel.k8s.io", []Offer{{SPDY, []string{ExecProtocolV2}}}, ""},
		{SPDY, "v1", []Offer{{SPDY, []string{ExecProtocolV1}}}, ""},
		{WebSocket, "v1", []Offer{{WebSocket, []string{ExecProtocolV1}}}, ""},
		{Auto, "channel.k8s.io", []Offer{{WebSocket, []string{ExecProtocolV1}}, {SPDY, []string{ExecProtocolV1}}}, ""},
		{WebSocket, "v5", []Offer{{WebSocket, []string{ExecProtocolV5}}}, ""},
		{WebSocket, "v3", nil, "carries only"},
		{Auto, "v9", nil, "unknown exec/attach protocol"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s", tt.transport, tt.pin), func(t *testing.T) {
			got, err := ExecOffers(tt.transport, tt.pin)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("offers (-want +got):\n%s", diff)
			}
		})
	}
	if s := (Offer{SPDY, all}).String(); s != "SPDY v5..v1" {
		t.Errorf("String = %q", s)
	}
}

func TestExitCodeFromText(t *testing.T) {
	for text, want := range map[string]int{
		"command terminated with non-zero exit code: exit status 7":                              7,
		"command terminated with exit code 3":                                                    3,
		`command terminated with non-zero exit code: command ["sh" "-c" "exit 7"] exited with 7`: 7,
		"error executing command [sh -c exit 9], exit code 9":                                    9,
		"Internal error occurred: executable file not found":                                     1,
		"exit status 300": 1,
	} {
		if got := ExitCodeFromText(text); got != want {
			t.Errorf("ExitCodeFromText(%q) = %d, want %d", text, got, want)
		}
	}
}

// The plans keep their steps and names: what reports and messages show.
func TestOrderStepNames(t *testing.T) {
	for _, c := range []struct {
		call Call
		t    Transport
		want []string
	}{
		{CallExec, Auto, []string{"WebSocket v5.channel.k8s.io", "SPDY v5..v1", "WebSocket v4.channel.k8s.io"}},
		{CallAttach, WebSocket, []string{"WebSocket v5.channel.k8s.io", "WebSocket v4.channel.k8s.io"}},
		{CallExec, SPDY, []string{"SPDY v5..v1"}},
		{CallPortForward, Auto, []string{"SPDY portforward.k8s.io", "SPDY/3.1+portforward.k8s.io tunnel", "WebSocket v4.channel.k8s.io (direct)"}},
		{CallPortForward, WebSocket, []string{"SPDY/3.1+portforward.k8s.io tunnel", "WebSocket v4.channel.k8s.io (direct)"}},
	} {
		steps, err := Order(c.call, c.t)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range steps {
			names = append(names, s.Name)
		}
		if diff := cmp.Diff(c.want, names); diff != "" {
			t.Errorf("%s %s steps (-want +got):\n%s", c.call, c.t, diff)
		}
	}
	if _, err := Order(CallExec, "quic"); err == nil {
		t.Error("an unknown transport has a plan")
	}
}

// The catalogue literal is written in report order, the order AddForTest
// keeps.
func TestCatalogueInReportOrder(t *testing.T) {
	if !slices.IsSortedFunc(catalogue, reportOrder) {
		t.Errorf("the catalogue rows are not in report order: %v", Protocols(CallExec))
	}
}

// protocolV6 is a made-up v6 with v5's capabilities, on both transports.
const protocolV6 = "v6.channel.k8s.io"

func v6Rows() []Spec {
	caps := Capabilities{ExitCode: true, StdinEOF: true, Resize: true}
	return []Spec{
		{Protocol{SPDY, protocolV6}, remoteCommand, 6, FramingSPDY, caps},
		{Protocol{WebSocket, protocolV6}, remoteCommand, 6, FramingBinary, caps},
	}
}

// TestAddedRowIsDerivedEverywhere: one new row, and "newest first", the
// plans, their names, --protocol and "which versions can close stdin"
// follow it; removing it restores everything.
func TestAddedRowIsDerivedEverywhere(t *testing.T) {
	remove := AddForTest(v6Rows()...)
	wantSPDY := []string{protocolV6, ExecProtocolV5, ExecProtocolV4, ExecProtocolV3, ExecProtocolV2, ExecProtocolV1}
	if diff := cmp.Diff(wantSPDY, ExecProtocols); diff != "" {
		t.Errorf("ExecProtocols (-want +got):\n%s", diff)
	}
	auto, _ := ExecOffers(Auto, "")
	wantAuto := []Offer{{WebSocket, []string{protocolV6, ExecProtocolV5}}, {SPDY, wantSPDY}, {WebSocket, []string{ExecProtocolV4}}}
	if diff := cmp.Diff(wantAuto, auto); diff != "" {
		t.Errorf("auto's offers (-want +got):\n%s", diff)
	}
	if s := auto[1].String(); s != "SPDY v6..v1" {
		t.Errorf("the SPDY step is named %q", s)
	}
	if p, step, ok := PickAuto(CallAttach, func(p Protocol) bool { return p.Name == protocolV6 }); !ok || p != (Protocol{WebSocket, protocolV6}) || step.Name != "WebSocket "+protocolV6+","+ExecProtocolV5 {
		t.Errorf("auto picks %v in %q (%v)", p, step.Name, ok)
	}
	if got, err := ParseExecProtocol("v6"); err != nil || got != protocolV6 {
		t.Errorf("--protocol v6: %q, %v", got, err)
	}
	if _, err := ParseExecProtocol("v9"); err == nil || !strings.Contains(err.Error(), "(or v6..v1)") {
		t.Errorf("--protocol v9: %v", err)
	}
	if got := Names(Carrying(WebSocket, CanCloseStdin)); !slices.Equal(got, []string{protocolV6, ExecProtocolV5}) {
		t.Errorf("WebSocket versions that close stdin: %q", got)
	}
	exec := Protocols(CallExec)
	if i := slices.Index(exec, Protocol{SPDY, protocolV6}); i < 0 || exec[i-1] != (Protocol{SPDY, ExecProtocolV5}) {
		t.Errorf("SPDY v6 is not reported after SPDY v5: %v", exec)
	}
	if exec[len(exec)-1] != (Protocol{WebSocket, protocolV6}) {
		t.Errorf("WebSocket v6 is not reported last among exec's: %v", exec)
	}
	if c := CapabilitiesOf(CallAttach, Protocol{WebSocket, protocolV6}); !c.StdinEOF {
		t.Errorf("v6's capabilities: %+v", c)
	}

	remove()
	if !slices.Equal(ExecProtocols, wantSPDY[1:]) || len(Protocols(CallExec)) != len(exec)-2 {
		t.Errorf("removing the row left %q, %v", ExecProtocols, Protocols(CallExec))
	}
	if auto, _ := ExecOffers(Auto, ""); auto[0].String() != "WebSocket "+ExecProtocolV5 {
		t.Errorf("after removal auto starts with %s", auto[0])
	}
}
