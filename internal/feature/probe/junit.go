package probe

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/crisp-cri/crisp/internal/cli/output"
)

// JUnit XML (internal/cli/output's junit.go) of a smoke run.

func seconds(m Millis) string { return output.JUnitSeconds(time.Duration(m).Seconds()) }

// JUnit turns a smoke report into JUnit XML's structure, which always
// agrees with smoke's exit status: a failed check is a failure, a run that
// did not finish (interrupted, --timeout) is an error. Warnings (defects
// on transports auto does not pick) are skipped cases whose message starts
// with "WARNING:" and carry a warning property, so Jenkins and GitLab show
// them without failing the build, as smoke does not fail for them.
func (r *SmokeReport) JUnit(started time.Time) output.JUnitSuites {
	suite := output.JUnitSuite{
		Name:     "crisp smoke",
		Tests:    len(r.Checks),
		Failures: r.Failed,
		Skipped:  r.Skipped + r.Warnings,
		Time:     seconds(r.Duration),
		Props: []output.JUnitProperty{
			{Name: "container", Value: r.Container}, {Name: "pod", Value: r.Pod}, {Name: "strict", Value: fmt.Sprint(r.Strict)}, {Name: "warnings", Value: fmt.Sprint(r.Warnings)},
		},
	}
	if !started.IsZero() {
		suite.Timestamp = started.UTC().Format("2006-01-02T15:04:05")
	}
	if r.Image != "" {
		suite.Props = append(suite.Props, output.JUnitProperty{Name: "image", Value: r.Image})
	}
	for _, c := range r.Checks {
		class := "crisp.smoke." + string(c.Call)
		if c.Protocol != nil {
			class += "." + classPart(string(c.Transport)+"_"+c.Protocol.Name)
		}
		tc := output.JUnitCase{Name: c.Check.Name, ClassName: class, Time: seconds(c.Duration)}
		switch c.Outcome {
		case Fail:
			tc.Failure = &output.JUnitMessage{Message: firstLine(c.Detail), Type: "failure", Text: c.Detail}
		case Skip:
			tc.Skipped = &output.JUnitMessage{Message: c.Detail}
		case Warn:
			tc.Skipped = &output.JUnitMessage{Message: "WARNING: " + firstLine(c.Detail), Text: c.Detail}
			tc.Props = []output.JUnitProperty{{Name: "warning", Value: c.Detail}}
			tc.SystemOut = "WARNING: " + c.Detail
		default:
			tc.SystemOut = c.Detail
		}
		suite.Cases = append(suite.Cases, tc)
	}
	if r.Error != "" {
		suite.Tests++
		suite.Errors++
		suite.Cases = append(suite.Cases, output.JUnitCase{Name: "run", ClassName: "crisp.smoke", Time: seconds(r.Duration),
			Error: &output.JUnitMessage{Message: firstLine(r.Error), Type: "error", Text: r.Error}})
	}
	return output.JUnitSuites{Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors, Skipped: suite.Skipped, Time: suite.Time, Suites: []output.JUnitSuite{suite}}
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
	return output.WriteJUnit(w, r.JUnit(started))
}
