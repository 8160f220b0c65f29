// Package junit holds JUnit XML in the shape CI systems read
// (testsuites > testsuite > testcase with failure, error or skipped
// children) and its writer, shared by smoke's report (internal/probe) and
// the merged fleet report (internal/report).
package junit

import (
	"encoding/xml"
	"fmt"
	"io"
)

// Suites is the document root. Name is left out when empty.
type Suites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr,omitempty"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Time     string   `xml:"time,attr"`
	Suites   []Suite  `xml:"testsuite"`
}

// Suite is one run (of smoke, or of one node in a fleet).
type Suite struct {
	Name      string     `xml:"name,attr"`
	Tests     int        `xml:"tests,attr"`
	Failures  int        `xml:"failures,attr"`
	Errors    int        `xml:"errors,attr"`
	Skipped   int        `xml:"skipped,attr"`
	Time      string     `xml:"time,attr"`
	Timestamp string     `xml:"timestamp,attr,omitempty"`
	Props     []Property `xml:"properties>property,omitempty"`
	Cases     []Case     `xml:"testcase"`
}

// Property is a name/value pair of a suite or a case.
type Property struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// Case is one check.
type Case struct {
	Name      string   `xml:"name,attr"`
	ClassName string   `xml:"classname,attr"`
	Time      string   `xml:"time,attr"`
	Failure   *Message `xml:"failure,omitempty"`
	Error     *Message `xml:"error,omitempty"`
	Skipped   *Message `xml:"skipped,omitempty"`
	// Props carry a warning where CI shows properties (Jenkins).
	Props     []Property `xml:"properties>property,omitempty"`
	SystemOut string     `xml:"system-out,omitempty"`
}

// Message is a failure, error or skip reason.
type Message struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// Seconds formats a duration in seconds as JUnit's time attributes hold it.
func Seconds(s float64) string { return fmt.Sprintf("%.3f", s) }

// Write writes doc as an indented XML document with its header.
func Write(w io.Writer, doc Suites) error {
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
