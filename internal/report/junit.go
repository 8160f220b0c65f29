package report

import (
	"encoding/xml"
	"fmt"
	"io"
)

// JUnit XML as CI systems read it: one testsuite per node and kind, one
// testcase per check; an unreadable report is a failed testcase of a suite
// of its own, so the failure count is Fleet.Failures().

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string          `xml:"name,attr"`
	Tests    int             `xml:"tests,attr"`
	Failures int             `xml:"failures,attr"`
	Errors   int             `xml:"errors,attr"`
	Skipped  int             `xml:"skipped,attr"`
	Time     string          `xml:"time,attr"`
	Props    []junitProperty `xml:"properties>property,omitempty"`
	Cases    []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

func secs(s float64) string { return fmt.Sprintf("%.3f", s) }

func (f *Fleet) junit() junitSuites {
	root := junitSuites{Name: "crisp report"}
	var total float64
	for _, r := range f.Runs {
		s := junitSuite{Name: r.Kind + " " + r.Node, Props: []junitProperty{{"node", r.Node}, {"kind", r.Kind}, {"source", r.Source}}}
		if r.Image != "" {
			s.Props = append(s.Props, junitProperty{"image", r.Image})
		}
		var took float64
		for _, c := range r.Cells {
			tc := junitCase{Name: c.Check, ClassName: "crisp." + r.Kind + "." + r.Node, Time: secs(c.Seconds)}
			switch c.Outcome {
			case Fail:
				tc.Failure = &junitMessage{Message: firstLine(c.Detail), Type: "failure", Text: c.Detail}
				s.Failures++
			case Skip:
				tc.Skipped = &junitMessage{Message: c.Detail}
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
		s.Tests, s.Time = len(s.Cases), secs(took)
		total += took
		root.Suites = append(root.Suites, s)
	}
	if len(f.Problems) > 0 {
		s := junitSuite{Name: "crisp report input", Time: secs(0)}
		for _, p := range f.Problems {
			s.Cases = append(s.Cases, junitCase{Name: p.Source, ClassName: "crisp.report.input", Time: secs(0),
				Failure: &junitMessage{Message: "unreadable report", Type: "failure", Text: p.Err}})
		}
		s.Tests, s.Failures = len(s.Cases), len(s.Cases)
		root.Suites = append(root.Suites, s)
	}
	for _, s := range root.Suites {
		root.Tests += s.Tests
		root.Failures += s.Failures
		root.Skipped += s.Skipped
	}
	root.Time = secs(total)
	return root
}

// WriteJUnit writes the merged JUnit XML.
func (f *Fleet) WriteJUnit(w io.Writer) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(f.junit()); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
