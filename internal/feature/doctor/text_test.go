package doctor

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// A passing node run prints one line per hop, in the walk's order, each
// with its result and its latency (the hop's own, as a duration); the
// verdict comes last.
func TestPassingRunPrintsEveryHopWithItsLatency(t *testing.T) {
	fx := newFixture(t, mockruntime.Config{}, mocktest.ContainerSpec{})
	fx.w.port = int32(testkit.Echo(t))
	rep := newReport(ModeNode, "n")
	rep.Hops = fx.w.walk(context.Background())
	rep.finish()
	if !rep.OK {
		t.Fatalf("the healthy mock failed: %s", names(rep.Hops))
	}
	var out bytes.Buffer
	if err := rep.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) < len(rep.Hops)+2 {
		t.Fatalf("%d lines for %d hops:\n%s", len(lines), len(rep.Hops), out.String())
	}
	if f := strings.Fields(lines[0]); strings.Join(f, " ") != "HOP RESULT LATENCY DETAIL" {
		t.Errorf("header %q", lines[0])
	}
	passed := 0
	for i, h := range rep.Hops {
		f := strings.Fields(lines[i+1])
		if len(f) < 3 || f[0] != h.Name || f[1] != strings.ToUpper(string(h.Outcome)) {
			t.Errorf("line %d is %q, want hop %s %s", i+1, lines[i+1], h.Name, h.Outcome)
			continue
		}
		d, err := time.ParseDuration(f[2])
		if err != nil {
			t.Errorf("hop %s: latency column %q is not a duration (line %q)", h.Name, f[2], lines[i+1])
			continue
		}
		if f[2] != h.Latency.String() {
			t.Errorf("hop %s: latency %q, want the hop's %q", h.Name, f[2], h.Latency.String())
		}
		if h.Outcome == Pass {
			passed++
			if d <= 0 {
				t.Errorf("passing hop %s prints latency %s", h.Name, f[2])
			}
		}
	}
	if passed != len(rep.Hops)-1 { // all but tls, skipped on http
		t.Errorf("%d passing hops of %d: %s", passed, len(rep.Hops), names(rep.Hops))
	}
	if last := lines[len(lines)-1]; last != rep.Verdict() || !strings.HasPrefix(last, "healthy: every hop passed") {
		t.Errorf("last line %q, want the verdict %q", last, rep.Verdict())
	}
}
