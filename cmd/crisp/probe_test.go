package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/crisp-cri/crisp/internal/feature/probe"
	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// profileTable is docs/design.md's mock profile table, cell by cell, written
// from the document and not from the code: what each profile accepts, as
// "transport protocol". Attach accepts what exec accepts. Every other
// protocol probe offers must be refused.
var profileTable = map[streamserver.Profile]struct{ stream, forward []string }{
	// full: SPDY v1-v5; WebSocket channel, base64.channel, v4.channel,
	// v4.base64.channel, v5.channel (CLOSE) | SPDY portforward.k8s.io;
	// WebSocket v4.channel / v4.base64.channel; SPDY/3.1+portforward.k8s.io tunnel
	streamserver.ProfileFull: {
		stream: []string{
			"spdy channel.k8s.io", "spdy v2.channel.k8s.io", "spdy v3.channel.k8s.io", "spdy v4.channel.k8s.io", "spdy v5.channel.k8s.io",
			"websocket channel.k8s.io", "websocket base64.channel.k8s.io", "websocket v4.channel.k8s.io",
			"websocket v4.base64.channel.k8s.io", "websocket v5.channel.k8s.io",
		},
		forward: []string{"spdy portforward.k8s.io", "websocket v4.channel.k8s.io", "websocket v4.base64.channel.k8s.io", "websocket SPDY/3.1+portforward.k8s.io"},
	},
	// cri-streaming: SPDY v1-v4, WebSocket without v5 | SPDY; WebSocket v4 direct; no tunnel
	streamserver.ProfileCRIStreaming: {
		stream: []string{
			"spdy channel.k8s.io", "spdy v2.channel.k8s.io", "spdy v3.channel.k8s.io", "spdy v4.channel.k8s.io",
			"websocket channel.k8s.io", "websocket base64.channel.k8s.io", "websocket v4.channel.k8s.io", "websocket v4.base64.channel.k8s.io",
		},
		forward: []string{"spdy portforward.k8s.io", "websocket v4.channel.k8s.io", "websocket v4.base64.channel.k8s.io"},
	},
	// conmon-rs: WebSocket v5.channel only | tunnel only
	streamserver.ProfileConmonRS: {
		stream:  []string{"websocket v5.channel.k8s.io"},
		forward: []string{"websocket SPDY/3.1+portforward.k8s.io"},
	},
	// legacy: SPDY channel.k8s.io and v2 only | SPDY
	streamserver.ProfileLegacy: {
		stream:  []string{"spdy channel.k8s.io", "spdy v2.channel.k8s.io"},
		forward: []string{"spdy portforward.k8s.io"},
	},
}

// everyOffer is what probe must try, per call, whatever the profile: the
// brief's list, independent of probe.Matrix.
var everyOffer = map[string][]string{
	"exec": {
		"spdy channel.k8s.io", "spdy v2.channel.k8s.io", "spdy v3.channel.k8s.io", "spdy v4.channel.k8s.io", "spdy v5.channel.k8s.io",
		"websocket channel.k8s.io", "websocket base64.channel.k8s.io", "websocket v4.channel.k8s.io", "websocket v4.base64.channel.k8s.io", "websocket v5.channel.k8s.io",
	},
	"port-forward": {"spdy portforward.k8s.io", "websocket SPDY/3.1+portforward.k8s.io", "websocket v4.channel.k8s.io", "websocket v4.base64.channel.k8s.io"},
}

// crispCmd builds a crisp process against endpoint: the crisp built for
// the scripts (scriptCrisp).
// Out of process, because client-go leaves goroutines behind after some
// sessions (the v1 stdin copier, WebSocket heartbeats) that a short-lived
// CLI does not mind and TestMain's goleak check would.
func crispCmd(t *testing.T, endpoint string, args ...string) *exec.Cmd {
	t.Helper()
	bin := scriptCrisp.Path(t)
	cfg := filepath.Join(t.TempDir(), "crictl.yaml")
	if err := os.WriteFile(cfg, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"-r", endpoint, "-c", cfg}, args...)...)
	cmd.Env = append(os.Environ(), "CRI_CONFIG_FILE="+cfg)
	return cmd
}

// crispRun runs crisp against endpoint and returns its output and exit
// status.
func crispRun(t *testing.T, endpoint string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runCaptured(t, crispCmd(t, endpoint, args...), "crisp")
}

// runCaptured runs cmd and returns its output and exit status; only a
// failure to run it at all (what names it) fails the test.
func runCaptured(t *testing.T, cmd *exec.Cmd, what string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("running %s: %v", what, err)
	}
	return out.String(), errOut.String(), code
}

// tickerContainer starts a mock with profile and a container whose main
// process prints, so attach has output to read.
func tickerContainer(t *testing.T, cfg mockruntime.Config) (*mocktest.Env, string) {
	t.Helper()
	env := mocktest.Start(t, cfg)
	pod := env.RunPod(t, "diag")
	ctr := env.RunContainer(t, pod, mocktest.ContainerSpec{Name: "ticker", Command: []string{"sh", "-c", "while :; do echo tick; sleep 0.2; done"}})
	return env, ctr
}

func TestProbeJSONMatchesDesignProfiles(t *testing.T) {
	skipInShort(t)
	for _, profile := range streamserver.Profiles {
		t.Run(string(profile), func(t *testing.T) {
			env, ctr := tickerContainer(t, mockruntime.Config{Profile: profile})
			port := testkit.Echo(t)
			stdout, stderr, code := crispRun(t, env.Endpoint, "probe", ctr, "--port", fmt.Sprint(port), "-o", "json")
			if code != 0 {
				t.Fatalf("probe exited %d\nstderr: %s", code, stderr)
			}
			var rep probe.ProbeReport
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("probe -o json is not a report: %v\n%s", err, stdout)
			}
			want := profileTable[profile]
			accepts := func(call probe.Call, cell string) bool {
				list := want.stream
				if call == probe.CallPortForward {
					list = want.forward
				}
				for _, c := range list {
					if c == cell {
						return true
					}
				}
				return false
			}
			seen := map[string]bool{}
			for _, r := range rep.Results {
				cell := string(r.Transport) + " " + r.Name
				seen[string(r.Call)+"/"+cell] = true
				wantAcc := accepts(r.Call, cell)
				if r.Accepted != wantAcc {
					t.Errorf("%s %s: accepted=%t, docs/design.md's table says %t (HTTP %d %s %s)", r.Call, cell, r.Accepted, wantAcc, r.Status, r.Reason, r.Error)
				}
				switch {
				case r.Accepted && r.Negotiated != r.Name:
					t.Errorf("%s %s: negotiated %q", r.Call, cell, r.Negotiated)
				case !r.Accepted && (r.Status < 400 || r.Status > 499):
					t.Errorf("%s %s: refused without a 4xx status: %d %q %q", r.Call, cell, r.Status, r.Reason, r.Error)
				}
				if r.Accepted {
					for _, c := range r.Checks {
						if c.Outcome == probe.Fail {
							t.Errorf("%s %s: check %s failed on the mock: %s", r.Call, cell, c.Name, c.Detail)
						}
					}
				}
			}
			for _, call := range []string{"exec", "attach", "port-forward"} {
				offers := everyOffer[call]
				if call == "attach" {
					offers = everyOffer["exec"]
				}
				for _, cell := range offers {
					if !seen[call+"/"+cell] {
						t.Errorf("probe did not try %s %s", call, cell)
					}
				}
			}
			if n := len(rep.Results); n != 24 {
				t.Errorf("%d results, want 24 (10 exec, 10 attach, 4 port-forward)", n)
			}
			if t.Failed() {
				var acc []string
				for _, r := range rep.Results {
					if r.Accepted {
						acc = append(acc, string(r.Call)+" "+string(r.Transport)+" "+r.Name)
					}
				}
				sort.Strings(acc)
				t.Logf("accepted: %s", strings.Join(acc, "; "))
			}
		})
	}
}
