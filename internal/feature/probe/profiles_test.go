package probe

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// designProfiles is the mock's documented profile table, written out cell by
// cell independently of the code: for each profile, the protocols each call
// accepts ("transport protocol"). Everything else probe tries must be
// refused.
//
//	full:          exec/attach SPDY v1-v5; WebSocket channel, base64.channel, v4.channel,
//	               v4.base64.channel, v5.channel. port-forward SPDY portforward.k8s.io;
//	               WebSocket v4.channel / v4.base64.channel; SPDY/3.1+portforward.k8s.io tunnel
//	cri-streaming: SPDY v1-v4, WebSocket without v5; port-forward SPDY, WebSocket v4 direct, no tunnel
//	conmon-rs:     WebSocket v5.channel only; port-forward tunnel only
//	legacy:        SPDY channel.k8s.io and v2 only; port-forward SPDY
var designProfiles = map[string]map[Call][]string{
	"full": {
		CallExec: {
			"spdy channel.k8s.io", "spdy v2.channel.k8s.io", "spdy v3.channel.k8s.io", "spdy v4.channel.k8s.io", "spdy v5.channel.k8s.io",
			"websocket channel.k8s.io", "websocket base64.channel.k8s.io", "websocket v4.channel.k8s.io", "websocket v4.base64.channel.k8s.io", "websocket v5.channel.k8s.io",
		},
		CallPortForward: {"spdy portforward.k8s.io", "websocket v4.channel.k8s.io", "websocket v4.base64.channel.k8s.io", "websocket SPDY/3.1+portforward.k8s.io"},
	},
	"cri-streaming": {
		CallExec: {
			"spdy channel.k8s.io", "spdy v2.channel.k8s.io", "spdy v3.channel.k8s.io", "spdy v4.channel.k8s.io",
			"websocket channel.k8s.io", "websocket base64.channel.k8s.io", "websocket v4.channel.k8s.io", "websocket v4.base64.channel.k8s.io",
		},
		CallPortForward: {"spdy portforward.k8s.io", "websocket v4.channel.k8s.io", "websocket v4.base64.channel.k8s.io"},
	},
	"conmon-rs": {
		CallExec:        {"websocket v5.channel.k8s.io"},
		CallPortForward: {"websocket SPDY/3.1+portforward.k8s.io"},
	},
	"legacy": {
		CallExec:        {"spdy channel.k8s.io", "spdy v2.channel.k8s.io"},
		CallPortForward: {"spdy portforward.k8s.io"},
	},
}

// designAccepted says whether that table has call accept p under
// profile (attach speaks what exec speaks).
func designAccepted(profile string, call Call, p Protocol) bool {
	if call == CallAttach {
		call = CallExec
	}
	for _, cell := range designProfiles[profile][call] {
		if cell == string(p.Transport)+" "+p.Name {
			return true
		}
	}
	return false
}

// acceptedCells renders a report's accepted protocols in the table's terms.
func acceptedCells(rep *ProbeReport) map[Call][]string {
	out := map[Call][]string{}
	for _, r := range rep.Results {
		if r.Accepted {
			out[r.Call] = append(out[r.Call], string(r.Transport)+" "+r.Name)
		}
	}
	for _, v := range out {
		sort.Strings(v)
	}
	return out
}

// compareWithDesign fails t for every cell where rep differs from the table.
func compareWithDesign(t *testing.T, profile string, rep *ProbeReport) {
	t.Helper()
	want := 0
	for _, row := range Matrix() {
		want += len(row.Protocols)
	}
	if len(rep.Results) != want {
		t.Errorf("%s: %d results, want one per matrix cell (%d)", profile, len(rep.Results), want)
	}
	for _, r := range rep.Results {
		wantAcc := designAccepted(profile, r.Call, r.Protocol)
		if r.Accepted != wantAcc {
			t.Errorf("%s: %s %s: accepted=%t, the profile table says %t (status %d %s, error %s)", profile, r.Call, r.Protocol, r.Accepted, wantAcc, r.Status, r.Reason, r.Error)
		}
		if r.Accepted && r.Negotiated != r.Name {
			t.Errorf("%s: %s %s: negotiated %q", profile, r.Call, r.Protocol, r.Negotiated)
		}
		if !r.Accepted && r.Status == 0 {
			t.Errorf("%s: %s %s: refused without an HTTP status (error %q)", profile, r.Call, r.Protocol, r.Error)
		}
	}
	if t.Failed() {
		var b strings.Builder
		for call, cells := range acceptedCells(rep) {
			fmt.Fprintf(&b, "\n  %s: %s", call, strings.Join(cells, ", "))
		}
		t.Logf("%s: accepted per the report:%s", profile, b.String())
	}
}
