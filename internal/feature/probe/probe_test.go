package probe

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func fakeProfile(t testing.TB, profile string) *fakeRuntime {
	t.Helper()
	f := newFake(t, func(call Call, p Protocol) bool { return designAccepted(profile, call, p) })
	f.echoPort = 7777
	return f
}

func TestProbeFakeProfiles(t *testing.T) {
	for profile := range designProfiles {
		t.Run(profile, func(t *testing.T) {
			f := fakeProfile(t, profile)
			p := &Prober{URLs: f, Streamer: f, Timeout: 2 * time.Second}
			rep, err := p.Run(context.Background(), Target{ContainerID: "c1", PodID: "p1", Port: 7777})
			if err != nil {
				t.Fatal(err)
			}
			// Through JSON, as users read it.
			data, err := json.Marshal(rep)
			if err != nil {
				t.Fatal(err)
			}
			var back ProbeReport
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatal(err)
			}
			compareWithDesign(t, profile, &back)
			for _, r := range back.Results {
				for _, c := range r.Checks {
					if c.Outcome == Fail {
						t.Errorf("%s %s %s: %s", r.Call, r.Protocol, c.Name, c.Detail)
					}
				}
			}
		})
	}
}

func TestProbeSummary(t *testing.T) {
	tests := []struct {
		profile  string
		exec, pf string
		gap      string
	}{
		{"full", "websocket v5.channel.k8s.io", "spdy portforward.k8s.io", ""},
		{"cri-streaming", "spdy v4.channel.k8s.io", "spdy portforward.k8s.io", "exec: no WebSocket v5.channel.k8s.io, so stdin EOF cannot be sent over WebSocket"},
		{"conmon-rs", "websocket v5.channel.k8s.io", "websocket SPDY/3.1+portforward.k8s.io", ""},
		{"legacy", "spdy v2.channel.k8s.io", "spdy portforward.k8s.io", "carries no exit code"},
	}
	for _, tt := range tests {
		t.Run(tt.profile, func(t *testing.T) {
			f := fakeProfile(t, tt.profile)
			p := &Prober{URLs: f, Streamer: f, SkipChecks: true}
			rep, err := p.Run(context.Background(), Target{ContainerID: "c1", PodID: "p1"})
			if err != nil {
				t.Fatal(err)
			}
			exec, _ := rep.Auto(CallExec)
			pf, _ := rep.Auto(CallPortForward)
			if exec.String() != tt.exec || pf.String() != tt.pf {
				t.Errorf("auto picks exec %q, port-forward %q; want %q, %q", exec, pf, tt.exec, tt.pf)
			}
			if tt.gap != "" && !containsSub(rep.Summary.Gaps, tt.gap) {
				t.Errorf("gaps %q lack %q", rep.Summary.Gaps, tt.gap)
			}
		})
	}
}

func containsSub(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
