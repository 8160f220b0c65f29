package probe

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"k8s.io/klog/v2"
)

// TestMain quiets the streaming libraries' klog lines (the mock's
// streaming server runs in-process) and moves 256 KiB through smoke's
// integrity check instead of 16 MiB: the tests run it on every protocol of
// every profile under the race detector, where 16 MiB over base64 takes
// seconds. It fails the tests when goroutines outlive them, but for two
// of client-go's: the WebSocket heartbeat, which returns at its next ping
// once a session's connection is closed (internal/transport/remotecommand's
// TestMain says the same), and v1's error-stream reader, which blocks for
// good on an unbuffered channel when the stream is reset after the session
// returned (cri-streaming's v1 handler resets it, as containerd's does):
// client-go's leak, one per such SPDY channel.k8s.io session.
func TestMain(m *testing.M) {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	integritySize = 256 << 10
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("k8s.io/client-go/tools/remotecommand.(*heartbeat).start"),
		goleak.IgnoreTopFunction("k8s.io/client-go/tools/remotecommand.(*streamProtocolV1).stream.func2"))
}

func TestProbeFakeProfiles(t *testing.T) {
	for profile := range designProfiles {
		t.Run(profile, func(t *testing.T) {
			f := fakeProfile(t, profile)
			p := &Prober{URLs: f, Streamer: f, Timeout: 2 * time.Second}
			rep, err := p.Run(context.Background(), Target{ContainerID: "c1", PodID: "p1", Port: f.echoPort})
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
