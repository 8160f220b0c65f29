package doctor

import (
	"math"
	"slices"
	"time"
)

// Repeat is --repeat's summary: how many runs failed, the failures grouped
// by hop and error signature, and each hop's latency percentiles.
type Repeat struct {
	Runs       int `json:"runs"`
	FailedRuns int `json:"failedRuns"`
	// Interval is the pause between runs (--interval).
	Interval Millis         `json:"intervalMs"`
	Failures []FailureGroup `json:"failures"`
	Latency  []HopLatency   `json:"latency"`
}

// FailureGroup is every failure of one hop with one signature.
type FailureGroup struct {
	Hop       string `json:"hop"`
	Signature string `json:"signature"`
	Count     int    `json:"count"`
	// Reached is how many runs got as far as the hop.
	Reached int `json:"reached"`
	// Rate is Count over all runs.
	Rate float64 `json:"rate"`
	// FirstRun is the 1-based run it was first seen in; Example that
	// run's hop (error, cause, fix).
	FirstRun int `json:"firstRun"`
	Example  Hop `json:"example"`
}

// HopLatency is one hop's latency over the runs that reached it.
type HopLatency struct {
	Hop string `json:"hop"`
	N   int    `json:"n"`
	P50 Millis `json:"p50Ms"`
	P90 Millis `json:"p90Ms"`
	P99 Millis `json:"p99Ms"`
	Max Millis `json:"maxMs"`
}

// tally gathers the runs of --repeat.
type tally struct {
	runs, failed int
	groups       []*FailureGroup
	order        []string // hops in the order first seen
	reached      map[string]int
	samples      map[string][]time.Duration
	// keep is the first failed run's hops, else the last run's.
	keep       []Hop
	keptFailed bool
}

func newTally() *tally {
	return &tally{reached: map[string]int{}, samples: map[string][]time.Duration{}}
}

// add counts one run's hops.
func (t *tally) add(hops []Hop) {
	t.runs++
	failed := false
	for _, h := range hops {
		if _, seen := t.reached[h.Name]; !seen {
			t.order = append(t.order, h.Name)
		}
		t.reached[h.Name]++
		if h.Outcome != Skip {
			t.samples[h.Name] = append(t.samples[h.Name], time.Duration(h.Latency))
		}
		if h.Failed() {
			failed = true
			t.group(h)
		}
	}
	if failed {
		t.failed++
	}
	if !t.keptFailed {
		t.keep, t.keptFailed = hops, failed
	}
}

func (t *tally) group(h Hop) {
	for _, g := range t.groups {
		if g.Hop == h.Name && g.Signature == h.Signature {
			g.Count++
			return
		}
	}
	t.groups = append(t.groups, &FailureGroup{Hop: h.Name, Signature: h.Signature, Count: 1, FirstRun: t.runs, Example: h})
}

// summary is the Repeat of the runs so far.
func (t *tally) summary(interval time.Duration) *Repeat {
	r := &Repeat{Runs: t.runs, FailedRuns: t.failed, Interval: Millis(interval), Failures: []FailureGroup{}, Latency: []HopLatency{}}
	for _, g := range t.groups {
		fg := *g
		fg.Reached = t.reached[g.Hop]
		fg.Rate = float64(g.Count) / float64(max(t.runs, 1))
		r.Failures = append(r.Failures, fg)
	}
	slices.SortStableFunc(r.Failures, func(a, b FailureGroup) int { return b.Count - a.Count })
	for _, hop := range t.order {
		s := t.samples[hop]
		if len(s) == 0 {
			continue
		}
		slices.Sort(s)
		r.Latency = append(r.Latency, HopLatency{Hop: hop, N: len(s),
			P50: Millis(percentile(s, 0.50)), P90: Millis(percentile(s, 0.90)), P99: Millis(percentile(s, 0.99)), Max: Millis(s[len(s)-1])})
	}
	return r
}

// percentile is the nearest-rank percentile of sorted samples.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
