package streamserver

import (
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-streaming/pkg/streaming/portforward"
	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"
)

// The cri-streaming column of the table is what the library serves: that
// profile is served by cri-streaming alone, so the table must not claim
// more or less.
func TestCRIStreamingColumnIsTheLibrary(t *testing.T) {
	p, _ := ProfileCRIStreaming.Protocols()
	if diff := cmp.Diff(remotecommandserver.SupportedStreamingProtocols, p.RemoteCommandSPDY); diff != "" {
		t.Errorf("remote command over SPDY (-library +table):\n%s", diff)
	}
	if diff := cmp.Diff(portforward.SupportedProtocols, p.PortForwardSPDY); diff != "" {
		t.Errorf("port-forward over SPDY (-library +table):\n%s", diff)
	}
	for _, r := range protocolTable {
		if slices.Contains(r.Profiles, ProfileCRIStreaming) && r.Server != ServedByLibrary {
			t.Errorf("%s at endpoint %d: cri-streaming speaks it, but the table serves it by this package's code", r.Name, r.Endpoint)
		}
	}
	for _, r := range protocolTable {
		if !slices.Contains(r.Profiles, ProfileFull) {
			t.Errorf("%s at endpoint %d: the full profile does not speak it", r.Name, r.Endpoint)
		}
	}
}

// TestAddedRowFollowsIntoProfiles: one row added to the table, served as
// v5, is in the profiles it names, and a server made after it negotiates
// it under its own name and runs a session on it; the other profiles
// refuse it.
func TestAddedRowFollowsIntoProfiles(t *testing.T) {
	const v6 = "v6.channel.k8s.io"
	remove := AddProtocolForTest(
		ProtocolRow{v6, RemoteCommandSPDY, ServedAsV5, []Profile{ProfileFull}},
		ProtocolRow{v6, RemoteCommandWebSocket, ServedAsV5, []Profile{ProfileFull, ProfileConmonRS}},
	)
	defer remove()
	full, _ := ProfileFull.Protocols()
	if full.RemoteCommandSPDY[len(full.RemoteCommandSPDY)-1] != v6 || full.RemoteCommandWebSocket[len(full.RemoteCommandWebSocket)-1] != v6 {
		t.Errorf("full's protocols lack v6 at the end of their endpoint: %+v", full)
	}
	if conmon, _ := ProfileConmonRS.Protocols(); !slices.Equal(conmon.RemoteCommandWebSocket, []string{protoV5, v6}) || len(conmon.RemoteCommandSPDY) != 0 {
		t.Errorf("conmon-rs: %+v", conmon)
	}
	srv, _ := startServer(t, Config{Profile: ProfileFull})
	for _, transport := range []string{"spdy", "websocket"} {
		u := execURL(t, srv, &runtimeapi.ExecRequest{Cmd: []string{"echo", "hello"}, Stdout: true})
		var res upgradeResult
		if transport == "spdy" {
			res = checkSPDY(t, u, kindExec, v6, 0)
		} else {
			res = checkWebSocket(t, u, kindExec, v6, 0)
		}
		if res.status != http.StatusSwitchingProtocols || res.protocol != v6 {
			t.Errorf("full over %s: %+v, want v6 negotiated", transport, res)
		}
	}
	legacy, _ := startServer(t, Config{Profile: ProfileLegacy})
	if res, conn := spdyUpgrade(t, execURL(t, legacy, &runtimeapi.ExecRequest{Cmd: []string{"echo"}, Stdout: true}), v6); conn != nil || res.status != http.StatusForbidden {
		t.Errorf("legacy accepted v6: %+v", res)
	}

	remove()
	if full, _ := ProfileFull.Protocols(); slices.Contains(full.RemoteCommandSPDY, v6) {
		t.Errorf("removing the row left v6 in full: %+v", full)
	}
}
