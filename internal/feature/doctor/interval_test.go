package doctor

import (
	"context"
	"testing"
	"time"
)

// --repeat 3 --interval 150ms: each run starts at least the interval after
// the one before ended, and the summary records the interval.
func TestRepeatIntervalSpacesTheRuns(t *testing.T) {
	const interval = 150 * time.Millisecond
	var starts, ends []time.Time
	walk := func(context.Context) []Hop {
		starts = append(starts, time.Now())
		defer func() { ends = append(ends, time.Now()) }()
		return []Hop{{Name: HopRuntime, Outcome: Pass, Latency: Millis(time.Millisecond)}}
	}
	rep := newReport(ModeNode, "n")
	if err := repeatWalk(context.Background(), rep, Repeated{Runs: 3, Interval: interval}, walk); err != nil {
		t.Fatal(err)
	}
	if len(starts) != 3 {
		t.Fatalf("%d runs, want 3", len(starts))
	}
	for i := 1; i < len(starts); i++ {
		if gap := starts[i].Sub(ends[i-1]); gap < interval {
			t.Errorf("run %d started %s after run %d ended, want at least %s", i+1, gap, i, interval)
		}
	}
	if rep.Repeat == nil || rep.Repeat.Runs != 3 || time.Duration(rep.Repeat.Interval) != interval {
		t.Errorf("summary %+v, want 3 runs %s apart", rep.Repeat, interval)
	}
}

// The interval is a pause between runs, cut short by the context: a
// cancel during it ends the repeat at once, with the runs so far.
func TestRepeatIntervalEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runs := 0
	walk := func(context.Context) []Hop {
		runs++
		if runs == 1 {
			time.AfterFunc(50*time.Millisecond, cancel)
		}
		return []Hop{{Name: HopRuntime, Outcome: Pass}}
	}
	rep := newReport(ModeNode, "n")
	start := time.Now()
	err := repeatWalk(ctx, rep, Repeated{Runs: 3, Interval: time.Hour}, walk)
	if err == nil || runs != 1 {
		t.Fatalf("err %v after %d runs, want an interruption after 1", err, runs)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the cancel during an hour's interval took %s to end the repeat", took)
	}
	contains(t, "error", err.Error(), "interrupted after 1 of 3 runs")
	if len(rep.Hops) != 1 || rep.Error == "" {
		t.Errorf("the report keeps run 1's hops and the interruption: hops %s, error %q", names(rep.Hops), rep.Error)
	}
}
