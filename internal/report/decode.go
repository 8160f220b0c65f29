package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"

	"github.com/crisp-cri/crisp/internal/probe"
)

// Doc is one report found in the input.
type Doc struct {
	Run Run
}

// maxDoc bounds one JSON document (a smoke report is tens of kB).
const maxDoc = 64 << 20

// linePrefix matches what kubectl logs may put before each line:
// --prefix's "[pod/NAME/CONTAINER] " and --timestamps' RFC 3339 time.
var linePrefix = regexp.MustCompile(`^(\[[^\]\s]+\] )?(\d{4}-\d\d-\d\dT[0-9:.]+(Z|[+-]\d\d:\d\d) )?`)

// Decode finds the smoke and probe reports in a stream named name: one or
// many JSON documents, indented or not, possibly with other lines around
// them (log lines, kubectl logs prefixes). Lines that are not reports are
// skipped; a document that looks like a report but cannot be read (cut
// short, an unknown schemaVersion) is a Problem. The error is for the
// reader's own failures.
func Decode(name string, r io.Reader) ([]Doc, []Problem, error) {
	d := &decoder{name: name}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxDoc)
	for sc.Scan() {
		d.lineNo++
		line := bytes.TrimRight(sc.Bytes(), "\r")
		line = line[len(linePrefix.Find(line)):]
		d.line(line)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return d.docs, d.problems, fmt.Errorf("%s: line %d is longer than %d bytes", name, d.lineNo+1, maxDoc)
		}
		return d.docs, d.problems, fmt.Errorf("%s: %w", name, err)
	}
	d.abandon("the input ends inside it")
	return d.docs, d.problems, nil
}

type decoder struct {
	name     string
	lineNo   int
	docs     []Doc
	problems []Problem

	buf      []byte // the document being collected
	start    int    // its first line
	depth    int
	inString bool
	escaped  bool
}

func (d *decoder) line(line []byte) {
	trimmed := bytes.TrimLeft(line, " \t")
	if d.buf != nil && !continues(line) {
		// Not how an indented JSON document goes on: the one being
		// collected was cut short (or was no JSON); look at this line afresh.
		d.abandon(fmt.Sprintf("line %d interrupts it", d.lineNo))
	}
	if d.buf == nil {
		if len(trimmed) == 0 || trimmed[0] != '{' {
			return
		}
		d.start, d.depth, d.inString, d.escaped = d.lineNo, 0, false, false
		d.buf = make([]byte, 0, 4096)
		line = trimmed
	}
	for i, c := range line {
		d.buf = append(d.buf, c)
		if d.scan(c) {
			d.finish()
			if rest := bytes.TrimSpace(line[i+1:]); len(rest) > 0 && rest[0] == '{' {
				d.line(rest) // another document on the same line
			}
			return
		}
	}
	d.buf = append(d.buf, '\n')
	if len(d.buf) > maxDoc {
		d.abandon(fmt.Sprintf("it is over %d bytes", maxDoc))
	}
}

// continues reports whether line can be the next line of an indented JSON
// document: indented, or closing a brace or bracket.
func continues(line []byte) bool {
	return len(line) == 0 || line[0] == ' ' || line[0] == '\t' || line[0] == '}' || line[0] == ']'
}

// scan tracks the nesting outside strings; it reports true when the
// document's outermost brace closes.
func (d *decoder) scan(c byte) bool {
	switch {
	case d.escaped:
		d.escaped = false
	case d.inString:
		switch c {
		case '\\':
			d.escaped = true
		case '"':
			d.inString = false
		}
	case c == '"':
		d.inString = true
	case c == '{' || c == '[':
		d.depth++
	case c == '}' || c == ']':
		d.depth--
		return d.depth == 0
	}
	return false
}

func (d *decoder) where() string { return fmt.Sprintf("%s:%d", d.name, d.start) }

// abandon drops the document being collected; if it looked like a report,
// that is a problem.
func (d *decoder) abandon(why string) {
	if d.buf == nil {
		return
	}
	if looksLikeReport(d.buf) {
		d.problems = append(d.problems, Problem{Source: d.where(), Err: "a report that is cut short: " + why})
	}
	d.buf = nil
}

func (d *decoder) finish() {
	buf := d.buf
	d.buf = nil
	run, isReport, err := parseReport(buf)
	switch {
	case err != nil && (isReport || looksLikeReport(buf)):
		d.problems = append(d.problems, Problem{Source: d.where(), Err: err.Error()})
	case err == nil && isReport:
		run.Source = d.where()
		if run.Node == "" {
			run.Node = "(unnamed " + d.where() + ")"
		}
		d.docs = append(d.docs, Doc{Run: run})
	}
}

// looksLikeReport is a cheap guess at whether broken JSON was meant to be
// a report, so that a report cut short is not taken for a log line.
func looksLikeReport(b []byte) bool {
	return bytes.Contains(b, []byte(`"schemaVersion"`)) ||
		(bytes.Contains(b, []byte(`"checks"`)) && bytes.Contains(b, []byte(`"passed"`))) ||
		(bytes.Contains(b, []byte(`"results"`)) && bytes.Contains(b, []byte(`"summary"`)))
}

// head is what tells a report's kind.
type head struct {
	Schema  *int            `json:"schemaVersion"`
	Kind    string          `json:"kind"`
	Node    string          `json:"node"`
	Checks  json.RawMessage `json:"checks"`
	Passed  *int            `json:"passed"`
	Results json.RawMessage `json:"results"`
	Summary json.RawMessage `json:"summary"`
}

// parseReport reads one JSON document: isReport is false for JSON that is
// no report (other log lines); err is set for a report it cannot read.
func parseReport(b []byte) (run Run, isReport bool, err error) {
	var h head
	if err := json.Unmarshal(b, &h); err != nil {
		return Run{}, false, fmt.Errorf("not valid JSON: %w", err)
	}
	kind := h.Kind
	if kind == "" { // reports from before the schema was versioned
		switch {
		case h.Checks != nil && h.Passed != nil:
			kind = probe.KindSmoke
		case h.Results != nil && h.Summary != nil:
			kind = probe.KindProbe
		default:
			return Run{}, false, nil
		}
	}
	if kind != probe.KindSmoke && kind != probe.KindProbe {
		return Run{}, false, nil
	}
	if h.Schema != nil && *h.Schema > probe.SchemaVersion {
		return Run{}, true, fmt.Errorf("%s report of node %q has schemaVersion %d; this crisp reads up to %d: use a newer crisp report", kind, h.Node, *h.Schema, probe.SchemaVersion)
	}
	if kind == probe.KindSmoke {
		run, err = parseSmoke(b)
	} else {
		run, err = parseProbe(b)
	}
	if err != nil {
		return Run{}, true, fmt.Errorf("%s report of node %q: %w", kind, h.Node, err)
	}
	run.Kind, run.Node = kind, h.Node
	return run, true, nil
}
