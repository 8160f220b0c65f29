package probe

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
)

// JUnit XML, in the shape CI systems read: testsuites > testsuite >
// testcase with failure or skipped children.

// JUnitSuites is the document root.
type JUnitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []JUnitSuite `xml:"testsuite"`
}

// JUnitSuite is one run of smoke.
type JUnitSuite struct {
	Name      string          `xml:"name,attr"`
	Tests     int             `xml:"tests,attr"`
	Failures  int             `xml:"failures,attr"`
	Errors    int             `xml:"errors,attr"`
	Skipped   int             `xml:"skipped,attr"`
	Time      string          `xml:"time,attr"`
	Timestamp string          `xml:"timestamp,attr,omitempty"`
	Props     []JUnitProperty `xml:"properties>property,omitempty"`
	Cases     []JUnitCase     `xml:"testcase"`
}

// JUnitProperty is a name/value pair of the suite.
type JUnitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// JUnitCase is one check.
type JUnitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *JUnitMessage `xml:"failure,omitempty"`
	Error     *JUnitMessage `xml:"error,omitempty"`
	Skipped   *JUnitMessage `xml:"skipped,omitempty"`
	// Props carry a warning where CI shows properties (Jenkins).
	Props     []JUnitProperty `xml:"properties>property,omitempty"`
	SystemOut string          `xml:"system-out,omitempty"`
}

// JUnitMessage is a failure or skip reason.
type JUnitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

func seconds(m Millis) string { return fmt.Sprintf("%.3f", time.Duration(m).Seconds()) }

// JUnit turns a smoke report into JUnit XML's structure, which always
// agrees with smoke's exit status: a failed check is a failure, a run that
// did not finish (interrupted, --timeout) is an error. Warnings (defects
// on transports auto does not pick) are skipped cases whose message starts
// with "WARNING:" and carry a warning property, so Jenkins and GitLab show
// them without failing the build, as smoke does not fail for them.
func (r *SmokeReport) JUnit(started time.Time) JUnitSuites {
	suite := JUnitSuite{
		Name:     "crisp smoke",
		Tests:    len(r.Checks),
		Failures: r.Failed,
		Skipped:  r.Skipped + r.Warnings,
		Time:     seconds(r.Duration),
		Props: []JUnitProperty{
			{"container", r.Container}, {"pod", r.Pod}, {"strict", fmt.Sprint(r.Strict)}, {"warnings", fmt.Sprint(r.Warnings)},
		},
	}
	if !started.IsZero() {
		suite.Timestamp = started.UTC().Format("2006-01-02T15:04:05")
	}
	if r.Image != "" {
		suite.Props = append(suite.Props, JUnitProperty{"image", r.Image})
	}
	for _, c := range r.Checks {
		class := "crisp.smoke." + string(c.Call)
		if c.Protocol != nil {
			class += "." + classPart(string(c.Transport)+"_"+c.Protocol.Name)
		}
		tc := JUnitCase{Name: c.Check.Name, ClassName: class, Time: seconds(c.Duration)}
		switch c.Outcome {
		case Fail:
			tc.Failure = &JUnitMessage{Message: firstLine(c.Detail), Type: "failure", Text: c.Detail}
		case Skip:
			tc.Skipped = &JUnitMessage{Message: c.Detail}
		case Warn:
			tc.Skipped = &JUnitMessage{Message: "WARNING: " + firstLine(c.Detail), Text: c.Detail}
			tc.Props = []JUnitProperty{{"warning", c.Detail}}
			tc.SystemOut = "WARNING: " + c.Detail
		default:
			tc.SystemOut = c.Detail
		}
		suite.Cases = append(suite.Cases, tc)
	}
	if r.Error != "" {
		suite.Tests++
		suite.Errors++
		suite.Cases = append(suite.Cases, JUnitCase{Name: "run", ClassName: "crisp.smoke", Time: seconds(r.Duration),
			Error: &JUnitMessage{Message: firstLine(r.Error), Type: "error", Text: r.Error}})
	}
	return JUnitSuites{Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors, Skipped: suite.Skipped, Time: suite.Time, Suites: []JUnitSuite{suite}}
}

// classPart makes a protocol name one part of a JUnit classname: CI
// systems split classnames at dots into packages, so dots (and the other
// punctuation of protocol names) become underscores.
func classPart(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// WriteJUnit writes the report as JUnit XML.
func (r *SmokeReport) WriteJUnit(w io.Writer, started time.Time) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(r.JUnit(started)); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
