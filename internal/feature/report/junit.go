package report

import (
	"io"
	"strings"

	"github.com/crisp-cri/crisp/internal/cli/output"
)

// JUnit XML as CI systems read it: one testsuite per node and kind, one
// testcase per check; an unreadable report is a failed testcase of a suite
// of its own, so the failure count is Fleet.Failures().

func (f *Fleet) junit() output.JUnitSuites {
	root := output.JUnitSuites{Name: "crisp report"}
	var total float64
	for _, r := range f.Runs {
		node := Printable(r.Node)
		s := output.JUnitSuite{Name: r.Kind + " " + node, Props: []output.JUnitProperty{{Name: "node", Value: node}, {Name: "kind", Value: r.Kind}, {Name: "source", Value: Printable(r.Source)}}}
		if r.Image != "" {
			s.Props = append(s.Props, output.JUnitProperty{Name: "image", Value: Printable(r.Image)})
		}
		if !r.Time.IsZero() {
			s.Timestamp = r.Time.UTC().Format("2006-01-02T15:04:05")
		}
		var took float64
		for _, c := range r.Cells {
			tc := output.JUnitCase{Name: Printable(c.Check), ClassName: "crisp." + r.Kind + "." + node, Time: output.JUnitSeconds(c.Seconds)}
			switch c.Outcome {
			case Fail:
				tc.Failure = &output.JUnitMessage{Message: Printable(firstLine(c.Detail)), Type: "failure", Text: printableLines(c.Detail)}
				s.Failures++
			case Skip:
				tc.Skipped = &output.JUnitMessage{Message: Printable(c.Detail)}
				s.Skipped++
			default:
				tc.SystemOut = string(c.Outcome)
				if c.Detail != "" {
					tc.SystemOut += ": " + printableLines(c.Detail)
				}
			}
			took += c.Seconds
			s.Cases = append(s.Cases, tc)
		}
		s.Tests, s.Time = len(s.Cases), output.JUnitSeconds(took)
		total += took
		root.Suites = append(root.Suites, s)
	}
	if len(f.Problems) > 0 {
		s := output.JUnitSuite{Name: "crisp report input", Time: output.JUnitSeconds(0)}
		for _, p := range f.Problems {
			s.Cases = append(s.Cases, output.JUnitCase{Name: Printable(p.Source), ClassName: "crisp.report.input", Time: output.JUnitSeconds(0),
				Failure: &output.JUnitMessage{Message: "unreadable report", Type: "failure", Text: printableLines(p.Err)}})
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
	root.Time = output.JUnitSeconds(total)
	return root
}

// printableLines is Printable line by line: a multi-line detail keeps its
// lines in a JUnit failure body, where CI shows it as a block.
func printableLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Printable(l)
	}
	return strings.Join(lines, "\n")
}

// WriteJUnit writes the merged JUnit XML.
func (f *Fleet) WriteJUnit(w io.Writer) error {
	return output.WriteJUnit(w, f.junit())
}
