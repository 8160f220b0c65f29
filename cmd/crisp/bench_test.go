package main

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/crisp-cri/crisp/internal/feature/probe"
	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// benchSteps is, per profile, what bench must measure: the steps of
// docs/design.md's auto order that the profile's row accepts (exec: WebSocket
// v5, SPDY at the highest version, WebSocket v4; port-forward: SPDY, the
// tunnel, WebSocket v4), worked out by hand from the table.
var benchSteps = map[streamserver.Profile]struct{ exec, forward []string }{
	streamserver.ProfileFull: {
		exec:    []string{"websocket v5.channel.k8s.io", "spdy v5.channel.k8s.io", "websocket v4.channel.k8s.io"},
		forward: []string{"spdy portforward.k8s.io", "websocket SPDY/3.1+portforward.k8s.io", "websocket v4.channel.k8s.io"},
	},
	streamserver.ProfileCRIStreaming: {
		exec:    []string{"spdy v4.channel.k8s.io", "websocket v4.channel.k8s.io"},
		forward: []string{"spdy portforward.k8s.io", "websocket v4.channel.k8s.io"},
	},
	streamserver.ProfileConmonRS: {
		exec:    []string{"websocket v5.channel.k8s.io"},
		forward: []string{"websocket SPDY/3.1+portforward.k8s.io"},
	},
	streamserver.ProfileLegacy: {
		exec:    []string{"spdy v2.channel.k8s.io"},
		forward: []string{"spdy portforward.k8s.io"},
	},
}

func TestBenchJSONHasEveryFigure(t *testing.T) {
	for _, profile := range streamserver.Profiles {
		t.Run(string(profile), func(t *testing.T) {
			env, ctr := tickerContainer(t, mockruntime.Config{Profile: profile})
			port := testkit.Echo(t)
			const size = 256 << 10
			stdout, stderr, code := crispRun(t, env.Endpoint, "bench", ctr, "--port", fmt.Sprint(port), "--size", fmt.Sprint(size), "--runs", "3", "-o", "json")
			if code != 0 {
				t.Fatalf("bench exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			var rep probe.BenchReport
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("bench -o json is not a report: %v\n%s", err, stdout)
			}
			if rep.Size != size || rep.Runs != 3 {
				t.Errorf("report says size %d runs %d, want %d and 3", rep.Size, rep.Runs, size)
			}
			got := map[string]probe.BenchResult{}
			for _, r := range rep.Results {
				got[string(r.Call)+"/"+string(r.Transport)+" "+r.Name] = r
			}
			want := benchSteps[profile]
			check := func(key string, figures map[string]int) {
				r, ok := got[key]
				if !ok {
					t.Errorf("no figures for %s", key)
					return
				}
				delete(got, key)
				have := map[string]probe.Figure{}
				for _, f := range r.Figures {
					have[f.Name] = f
				}
				for name, runs := range figures {
					f, ok := have[name]
					switch {
					case !ok:
						t.Errorf("%s: no %s figure", key, name)
					case f.Error != "" || f.Skipped != "":
						t.Errorf("%s: %s not measured: %s%s", key, name, f.Error, f.Skipped)
					case f.Runs != runs || len(f.Values) != runs:
						t.Errorf("%s: %s has %d runs (%d values), want %d", key, name, f.Runs, len(f.Values), runs)
					case !(f.Median > 0) || f.Min > f.Median || f.Median > f.Max:
						t.Errorf("%s: %s figures are not a median of positive values: %+v", key, name, f.Stats)
					}
				}
			}
			for _, step := range want.exec {
				check("exec/"+step, map[string]int{probe.FigureExecTrue: 20, probe.FigureStdout: 3, probe.FigureStdin: 3})
			}
			for _, step := range want.forward {
				check("port-forward/"+step, map[string]int{probe.FigureForward: 3})
			}
			for key := range got {
				t.Errorf("figures for %s, which is not a step of the auto order this profile accepts", key)
			}
		})
	}
}
