package doctor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

func TestTallyGroupsFailuresAndTakesPercentiles(t *testing.T) {
	tl := newTally()
	ok := func(ms int) []Hop {
		return []Hop{{Name: "runtime", Outcome: Pass, Latency: Millis(time.Duration(ms) * time.Millisecond)}, {Name: "tcp", Outcome: Pass, Latency: Millis(time.Millisecond)}}
	}
	for i := 1; i <= 100; i++ {
		tl.add(ok(i))
	}
	bad := []Hop{{Name: "runtime", Outcome: Pass}, {Name: "tcp", Outcome: Fail, Signature: sigRefused, Error: "refused"}}
	tl.add(bad)
	tl.add(bad)
	tl.add([]Hop{{Name: "runtime", Outcome: Fail, Signature: sigNoSocket}})
	r := tl.summary(time.Second)
	if r.Runs != 103 || r.FailedRuns != 3 {
		t.Fatalf("runs %d failed %d, want 103 and 3", r.Runs, r.FailedRuns)
	}
	if len(r.Failures) != 2 || r.Failures[0].Hop != "tcp" || r.Failures[0].Count != 2 || r.Failures[0].FirstRun != 101 || r.Failures[0].Reached != 102 {
		t.Fatalf("failures %+v", r.Failures)
	}
	if got := r.Failures[0].Rate; got < 0.019 || got > 0.02 {
		t.Errorf("rate %v, want 2/103", got)
	}
	rt := r.Latency[0]
	if rt.Hop != "runtime" || rt.N != 103 || time.Duration(rt.P50) != 49*time.Millisecond || time.Duration(rt.P99) != 99*time.Millisecond || time.Duration(rt.Max) != 100*time.Millisecond {
		t.Errorf("runtime latency %+v (p50 %s p99 %s)", rt, time.Duration(rt.P50), time.Duration(rt.P99))
	}
	// The report keeps the first failed run's hops.
	if len(tl.keep) != 2 || !tl.keep[1].Failed() {
		t.Errorf("kept %+v", tl.keep)
	}
}

// repeatOn walks the mock's path runs times and returns the summary.
func repeatOn(t *testing.T, cfg mockruntime.Config, runs int) *Report {
	t.Helper()
	return repeatAt(t, newFixture(t, cfg, mocktest.ContainerSpec{}), runs)
}

func repeatAt(t *testing.T, fx *fixture, runs int) *Report {
	t.Helper()
	fx.w.attachWindow = 10 * time.Millisecond
	rep := newReport(ModeNode, "n")
	if err := repeatWalk(context.Background(), rep, Repeated{Runs: runs}, fx.w.walk); err != nil {
		t.Fatal(err)
	}
	rep.finish()
	return rep
}

func TestRepeatOnAHealthyMockFindsNothing(t *testing.T) {
	rep := repeatOn(t, mockruntime.Config{}, 30)
	if !rep.OK || rep.Repeat.FailedRuns != 0 || len(rep.Repeat.Failures) != 0 {
		t.Fatalf("healthy: %+v", rep.Repeat)
	}
	if len(rep.Repeat.Latency) != 10 { // every hop but the skipped tls and port-forward
		t.Errorf("latency rows %+v", rep.Repeat.Latency)
	}
}

// One connection in 100 reset by the streaming server: about 1% of the
// runs fail at each hop that opens a connection (the TCP hop sees a reset
// only when it comes while connecting), as a reset, never at the runtime's
// hops.
func TestRepeatFindsOneConnectionInAHundred(t *testing.T) {
	if testing.Short() {
		t.Skip("200 runs")
	}
	rep := repeatOn(t, mockruntime.Config{Faults: []streamserver.Fault{{Kind: streamserver.FaultRefuseConnOneIn, N: 100}}}, 200)
	aboutOnePercent(t, rep)
}

// The same fault from outside the runtime: a proxy in front of the
// streaming server (the URLs name it) resets one connection in 100 after
// the kernel completed the client's connect (the TCP hop sees the reset
// only when it lands before connect returns); every failed run is one the
// proxy reset.
func TestRepeatFindsOneConnectionInAHundredAtAProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("200 runs")
	}
	proxy := testkit.NewProxy(t, "")
	fx := newFixture(t, mockruntime.Config{StreamURLAddr: proxy.Addr()}, mocktest.ContainerSpec{})
	proxy.SetTarget(fx.env.Runtime.StreamServer().Addr())
	proxy.ResetOneIn(100)
	rep := repeatAt(t, fx, 200)
	aboutOnePercent(t, rep)
	if got := rep.Repeat.FailedRuns; got > proxy.Resets() {
		t.Errorf("%d runs failed, more than the %d connections the proxy reset", got, proxy.Resets())
	}
}

// aboutOnePercent checks a --repeat 200 report against one connection in
// 100 reset (7 a run): a few runs failed, each hop about 1%, only hops that
// open a connection to the streaming server, each as a reset with its cause
// and fix.
func aboutOnePercent(t *testing.T, rep *Report) {
	t.Helper()
	r := rep.Repeat
	if rep.OK || r.FailedRuns < 3 || r.FailedRuns > 30 {
		t.Fatalf("%d of %d runs failed, want about 1 in 100 connections (7 a run): %+v", r.FailedRuns, r.Runs, r.Failures)
	}
	total := 0
	for _, g := range r.Failures {
		total += g.Count
		if !strings.HasPrefix(g.Hop, "upgrade-") && g.Hop != HopTCP && g.Hop != HopExec && g.Hop != HopAttach {
			t.Errorf("a reset seen at hop %s: %+v", g.Hop, g)
		}
		if g.Signature != sigReset && g.Signature != sigEOF {
			t.Errorf("hop %s: signature %q, want a reset or EOF (error %q)", g.Hop, g.Signature, g.Example.Error)
		}
		if g.Rate > 0.045 { // a Poisson count of mean 2 passes 9 in 200 runs about once in 10^4
			t.Errorf("hop %s fails %.1f%% of runs, want about 1%%", g.Hop, 100*g.Rate)
		}
		if g.Example.Cause == "" || g.Example.Fix == "" {
			t.Errorf("hop %s: no cause or fix: %+v", g.Hop, g.Example)
		}
		if strings.Contains(g.Example.Cause, "nothing accepts") {
			t.Errorf("hop %s: a reset explained as a missing server: %q", g.Hop, g.Example.Cause)
		}
	}
	if total != r.FailedRuns {
		t.Errorf("groups count %d failures, runs %d", total, r.FailedRuns)
	}
	t.Logf("%d of %d runs failed: %+v", r.FailedRuns, r.Runs, r.Failures)
}
