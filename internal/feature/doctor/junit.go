package doctor

import (
	"fmt"
	"time"

	"github.com/crisp-cri/crisp/internal/cli/output"
)

// JUnit turns the report into JUnit XML's structure (internal/cli/output,
// as smoke writes it): one case per hop, a failed hop a failure whose text
// carries the cause and the fix; with --repeat one failure case per group
// of failures too. A run that did not finish is an error case.
func (r *Report) JUnit(started time.Time) output.JUnitSuites {
	suite := output.JUnitSuite{
		Name: "crisp doctor",
		Props: []output.JUnitProperty{
			{Name: "mode", Value: r.Mode}, {Name: "node", Value: r.Node},
			{Name: "runtime", Value: r.Runtime.Name + " " + r.Runtime.Version}, {Name: "container", Value: r.Target.Container},
		},
	}
	if !started.IsZero() {
		suite.Timestamp = started.UTC().Format("2006-01-02T15:04:05")
	}
	var total time.Duration
	for _, h := range r.Hops {
		total += time.Duration(h.Latency)
		tc := output.JUnitCase{Name: h.Name, ClassName: "crisp.doctor." + r.Mode, Time: output.JUnitSeconds(time.Duration(h.Latency).Seconds()), SystemOut: h.Detail}
		switch h.Outcome {
		case Fail:
			suite.Failures++
			tc.Failure = &output.JUnitMessage{Message: firstLine(h.Error), Type: h.Signature, Text: explained(h)}
		case Skip:
			suite.Skipped++
			tc.Skipped = &output.JUnitMessage{Message: h.Detail}
		case Warn, Note:
			tc.SystemOut = fmt.Sprintf("%s: %s", h.Outcome, explained(h))
		}
		suite.Cases = append(suite.Cases, tc)
	}
	if r.Repeat != nil {
		suite.Props = append(suite.Props, output.JUnitProperty{Name: "runs", Value: fmt.Sprint(r.Repeat.Runs)},
			output.JUnitProperty{Name: "failedRuns", Value: fmt.Sprint(r.Repeat.FailedRuns)})
		for _, g := range r.Repeat.Failures {
			if g.Example.Name == "" {
				continue
			}
			suite.Failures++
			suite.Cases = append(suite.Cases, output.JUnitCase{
				Name: fmt.Sprintf("%s: %s", g.Hop, g.Signature), ClassName: "crisp.doctor.repeat",
				Failure: &output.JUnitMessage{Message: fmt.Sprintf("%d of %d runs (%.1f%%)", g.Count, r.Repeat.Runs, 100*g.Rate), Type: g.Signature, Text: explained(g.Example)},
			})
		}
	}
	if r.Error != "" {
		suite.Errors++
		suite.Cases = append(suite.Cases, output.JUnitCase{Name: "run", ClassName: "crisp.doctor",
			Error: &output.JUnitMessage{Message: firstLine(r.Error), Type: "error", Text: r.Error}})
	}
	suite.Tests = len(suite.Cases)
	suite.Time = output.JUnitSeconds(total.Seconds())
	all := output.JUnitSuites{Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors, Skipped: suite.Skipped, Time: suite.Time, Suites: []output.JUnitSuite{suite}}
	if r.NodeSide != nil {
		// The node half is a suite of its own (its class names say node).
		n := r.NodeSide.JUnit(started)
		all.Tests, all.Failures, all.Errors, all.Skipped = all.Tests+n.Tests, all.Failures+n.Failures, all.Errors+n.Errors, all.Skipped+n.Skipped
		all.Time += n.Time
		all.Suites = append(all.Suites, n.Suites...)
	}
	return all
}

// explained is a hop's tried, error, cause and fix as lines.
func explained(h Hop) string {
	s := ""
	for _, l := range h.explanation() {
		s += l[0] + ": " + l[1] + "\n"
	}
	return s
}

// explanation is a hop's labelled lines: tried, error, means, fix (those
// that are set).
func (h Hop) explanation() [][2]string {
	var out [][2]string
	for _, l := range [][2]string{{"tried", h.Tried}, {"error", h.Error}, {"means", h.Cause}, {"fix", h.Fix}} {
		if l[1] != "" {
			out = append(out, l)
		}
	}
	return out
}

// WriteJUnitFile writes the report's JUnit XML to path (--junit FILE).
func (r *Report) WriteJUnitFile(path string, started time.Time) error {
	return output.WriteJUnitFile(path, r.JUnit(started))
}
