// Package report merges the JSON reports that crisp smoke, crisp probe and
// crisp doctor write on many nodes into one fleet view: the matrix of nodes by checks,
// a verdict, merged JUnit XML and Markdown for CI job summaries.
//
// It reads the reports' JSON shapes (schemaVersion 1; doctor's is
// versioned apart, docs/doctor.md), not the probe and doctor packages' Go
// types: the reports of a fleet may come from other builds of
// crisp, and the JSON is the contract between them. It knows nothing of
// runtimes, transports or the command line.
package report

import (
	"fmt"
	"sort"
	"time"
)

// Outcome is the verdict of one check on one node, as a cell of the matrix.
type Outcome string

// Cell outcomes. smoke's checks are pass, fail, warn or skip; a probe row
// is pass (accepted, its checks passed), fail (the protocol auto picks, or
// nothing at all for a call, failed), warn (another accepted protocol
// failed a check), refused (the runtime said no, which is information, not
// a failure) or error (no answer).
const (
	Pass    Outcome = "pass"
	Fail    Outcome = "fail"
	Warn    Outcome = "warn"
	Skip    Outcome = "skip"
	Refused Outcome = "refused"
	Error   Outcome = "error"
)

// Cell is one check's result on one node.
type Cell struct {
	Check   string  `json:"check"`
	Outcome Outcome `json:"outcome"`
	Detail  string  `json:"detail,omitempty"`
	// Seconds is how long the check took (0 when the report does not say).
	Seconds float64 `json:"seconds,omitempty"`
}

// Run is the report of one kind (smoke, probe or doctor) from one node.
type Run struct {
	Node   string `json:"node"`
	Kind   string `json:"kind"`
	Source string `json:"source"` // where it was read: FILE:LINE
	Cells  []Cell `json:"checks"`
	// Image, Container: what the run tested, when the report says.
	Image     string `json:"image,omitempty"`
	Container string `json:"container,omitempty"`
	// Time is when the report was made: its own "time" field, else the
	// time kubectl logs --timestamps put on its first line; zero when
	// neither says. Of two reports of a node, the later one counts.
	Time time.Time `json:"time,omitzero"`
}

// Count returns how many cells have outcome o.
func (r Run) Count(o Outcome) int {
	n := 0
	for _, c := range r.Cells {
		if c.Outcome == o {
			n++
		}
	}
	return n
}

// Failed reports whether any check failed on the node.
func (r Run) Failed() bool { return r.Count(Fail) > 0 }

// Problem is an input that looked like a report but could not be read
// (truncated by a killed pod, an unknown schemaVersion): it fails the fleet,
// since a node whose report cannot be read has not shown that it works.
type Problem struct {
	Source string `json:"source"`
	Err    string `json:"error"`
}

// Fleet is the merged view.
type Fleet struct {
	Runs     []Run     `json:"runs"`
	Problems []Problem `json:"problems,omitempty"`
	// Notes are things worth knowing that fail nothing (a node reported
	// twice: the later report is kept).
	Notes []string `json:"notes,omitempty"`
}

// Merge builds the fleet view from decoded documents. Of two reports of
// the same node and kind the later one counts: by their times when both
// have one, else by their order in the input.
func Merge(docs []Doc, problems []Problem) *Fleet {
	f := &Fleet{Problems: problems}
	index := map[string]int{}
	for _, d := range docs {
		key := d.Run.Kind + "\x00" + d.Run.Node
		if i, ok := index[key]; ok {
			prev, kept := f.Runs[i], d.Run
			how := "it comes later in the input"
			if !prev.Time.IsZero() && !d.Run.Time.IsZero() {
				how = "the later by its time"
				if d.Run.Time.Before(prev.Time) {
					kept = prev
				}
			}
			f.Notes = append(f.Notes, fmt.Sprintf("%s reported %s twice (%s and %s): the one from %s counts (%s)", d.Run.Node, d.Run.Kind, prev.Source, d.Run.Source, kept.Source, how))
			f.Runs[i] = kept
			continue
		}
		index[key] = len(f.Runs)
		f.Runs = append(f.Runs, d.Run)
	}
	sort.SliceStable(f.Runs, func(i, j int) bool {
		if f.Runs[i].Kind != f.Runs[j].Kind {
			return f.Runs[i].Kind > f.Runs[j].Kind // smoke before probe
		}
		return f.Runs[i].Node < f.Runs[j].Node
	})
	return f
}

// Failures is the number of failed checks across the fleet plus the
// unreadable reports: the JUnit failure count, and non-zero exactly when
// the fleet failed.
func (f *Fleet) Failures() int {
	n := len(f.Problems)
	for _, r := range f.Runs {
		n += r.Count(Fail)
	}
	return n
}

// OK reports whether every node passed and every report was readable.
func (f *Fleet) OK() bool { return f.Failures() == 0 && len(f.Runs) > 0 }

// Kinds returns the report kinds present, smoke first.
func (f *Fleet) Kinds() []string {
	var kinds []string
	seen := map[string]bool{}
	for _, r := range f.Runs {
		if !seen[r.Kind] {
			seen[r.Kind] = true
			kinds = append(kinds, r.Kind)
		}
	}
	return kinds
}

// RunsOf returns the runs of one kind.
func (f *Fleet) RunsOf(kind string) []Run {
	var runs []Run
	for _, r := range f.Runs {
		if r.Kind == kind {
			runs = append(runs, r)
		}
	}
	return runs
}
