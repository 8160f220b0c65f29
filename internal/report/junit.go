package report

import (
	"io"

	"github.com/crisp-cri/crisp/internal/junit"
)

// JUnit XML as CI systems read it: one testsuite per node and kind, one
// testcase per check; an unreadable report is a failed testcase of a suite
// of its own, so the failure count is Fleet.Failures().

func (f *Fleet) junit() junit.Suites {
	root := junit.Suites{Name: "crisp report"}
	var total float64
	for _, r := range f.Runs {
		s := junit.Suite{Name: r.Kind + " " + r.Node, Props: []junit.Property{{Name: "node", Value: r.Node}, {Name: "kind", Value: r.Kind}, {Name: "source", Value: r.Source}}}
		if r.Image != "" {
			s.Props = append(s.Props, junit.Property{Name: "image", Value: r.Image})
		}
		var took float64
		for _, c := range r.Cells {
			tc := junit.Case{Name: c.Check, ClassName: "crisp." + r.Kind + "." + r.Node, Time: junit.Seconds(c.Seconds)}
			switch c.Outcome {
			case Fail:
				tc.Failure = &junit.Message{Message: firstLine(c.Detail), Type: "failure", Text: c.Detail}
				s.Failures++
			case Skip:
				tc.Skipped = &junit.Message{Message: c.Detail}
				s.Skipped++
			default:
				tc.SystemOut = string(c.Outcome)
				if c.Detail != "" {
					tc.SystemOut += ": " + c.Detail
				}
			}
			took += c.Seconds
			s.Cases = append(s.Cases, tc)
		}
		s.Tests, s.Time = len(s.Cases), junit.Seconds(took)
		total += took
		root.Suites = append(root.Suites, s)
	}
	if len(f.Problems) > 0 {
		s := junit.Suite{Name: "crisp report input", Time: junit.Seconds(0)}
		for _, p := range f.Problems {
			s.Cases = append(s.Cases, junit.Case{Name: p.Source, ClassName: "crisp.report.input", Time: junit.Seconds(0),
				Failure: &junit.Message{Message: "unreadable report", Type: "failure", Text: p.Err}})
		}
		s.Tests, s.Failures = len(s.Cases), len(s.Cases)
		root.Suites = append(root.Suites, s)
	}
	for _, s := range root.Suites {
		root.Tests += s.Tests
		root.Failures += s.Failures
		root.Errors += s.Errors
		root.Skipped += s.Skipped
	}
	root.Time = junit.Seconds(total)
	return root
}

// WriteJUnit writes the merged JUnit XML.
func (f *Fleet) WriteJUnit(w io.Writer) error {
	return junit.Write(w, f.junit())
}
