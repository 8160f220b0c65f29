// JUnit XML in the shape CI systems read
// (testsuites > testsuite > testcase with failure, error or skipped
// children) and its writer, shared by smoke's report (internal/feature/probe),
// doctor's (internal/feature/doctor) and the merged fleet report
// (internal/feature/report).

package output

import (
	"encoding/xml"
	"fmt"
	"io"

	"github.com/crisp-cri/crisp/internal/base/outfile"
)

// JUnitSuites is the document root. Name is left out when empty.
type JUnitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr,omitempty"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []JUnitSuite `xml:"testsuite"`
}

// JUnitSuite is one run (of smoke, or of one node in a fleet).
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

// JUnitProperty is a name/value pair of a suite or a case.
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

// JUnitMessage is a failure, error or skip reason.
type JUnitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// JUnitSeconds formats a duration in seconds as JUnit's time attributes hold it.
func JUnitSeconds(s float64) string { return fmt.Sprintf("%.3f", s) }

// Write writes doc as an indented XML document with its header.
func WriteJUnit(w io.Writer, doc JUnitSuites) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// WriteJUnitFile writes doc to a new file at path (--junit FILE;
// outfile.Create: what sits there is replaced, never written through); its
// errors name the flag and the file.
func WriteJUnitFile(path string, doc JUnitSuites) error {
	f, err := outfile.Create(path, 0o644)
	if err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	if err := WriteJUnit(f, doc); err != nil {
		_ = f.Close() // the write error says more
		return fmt.Errorf("--junit %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--junit %s: %w", path, err)
	}
	return nil
}
