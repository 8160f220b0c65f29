package probe

import (
	"context"
	"slices"
	"strings"
	"testing"

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
