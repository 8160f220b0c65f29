package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"time"

	"github.com/crisp-cri/crisp/internal/feature/doctor"
	"github.com/crisp-cri/crisp/internal/feature/probe"
)

// Doc is one report found in the input.
type Doc struct {
	Run Run
}

// maxDoc bounds one JSON document (a smoke report is tens of kB): a few MiB,
// so that no input takes crisp past a few tens of MiB.
const maxDoc = 8 << 20

// linePrefix matches what kubectl logs may put before each line:
// --prefix's "[pod/NAME/CONTAINER] " and --timestamps' RFC 3339 time.
var linePrefix = regexp.MustCompile(`^(\[[^\]\s]+\] )?(\d{4}-\d\d-\d\dT[0-9:.]+(Z|[+-]\d\d:\d\d) )?`)

// splitPrefix takes kubectl logs' prefix and time off a line. Most lines
// have neither: they skip the regexp, which was a tenth of merging a
// thousand reports.
func splitPrefix(line []byte) (prefix string, stamp time.Time, rest []byte) {
	if len(line) == 0 || (line[0] != '[' && (line[0] < '0' || line[0] > '9')) {
		return "", time.Time{}, line
	}
	m := linePrefix.FindSubmatchIndex(line)
	if m[2] >= 0 {
		prefix = string(line[m[2] : m[3]-1])
	}
	if m[4] >= 0 {
		stamp, _ = time.Parse(time.RFC3339Nano, string(line[m[4]:m[5]-1])) // a bad time is no time
	}
	return prefix, stamp, line[m[1]:]
}

// Decode finds the smoke and probe reports in a stream named name: one or
// many JSON documents, indented or not, possibly with other lines around
// them (log lines, kubectl logs prefixes). Lines that are not reports are
// skipped; a document that looks like a report but cannot be read (cut
// short, an unknown schemaVersion) is a Problem. The error is for the
// reader's own failures.
//
// A container log interleaves a program's stdout and stderr line by line
// in no fixed order, so a line that cannot continue an indented document
// (an error message, a tally) is set aside and the document goes on; only
// a new document or the end of the input cuts one short. With kubectl logs
// --prefix each pod's lines are collected apart, and a pod whose lines
// hold no report at all is a Problem: a node with no report has not shown
// that it works.
func Decode(name string, r io.Reader) ([]Doc, []Problem, error) {
	d := &decoder{name: name, streams: map[string]*collector{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxDoc)
	for sc.Scan() {
		d.lineNo++
		line := bytes.TrimRight(sc.Bytes(), "\r")
		prefix, stamp, rest := splitPrefix(line)
		d.collector(prefix).line(rest, stamp)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return d.docs, d.problems, fmt.Errorf("%s: line %d is longer than %d bytes", name, d.lineNo+1, maxDoc)
		}
		return d.docs, d.problems, fmt.Errorf("%s: %w", name, err)
	}
	for _, c := range d.order {
		c.abandon("the input ends inside it")
		if c.prefix != "" && c.found == 0 && c.crispSpoke {
			d.problems = append(d.problems, Problem{Source: fmt.Sprintf("%s:%d %s", name, c.firstLine, c.prefix),
				Err: fmt.Sprintf("%s printed %d lines but no smoke or probe report", c.prefix, c.lines)})
		}
	}
	return d.docs, d.problems, nil
}

type decoder struct {
	name     string
	lineNo   int
	docs     []Doc
	problems []Problem
	streams  map[string]*collector // by kubectl logs --prefix, "" without
	order    []*collector
}

func (d *decoder) collector(prefix string) *collector {
	c, ok := d.streams[prefix]
	if !ok {
		c = &collector{d: d, prefix: prefix, firstLine: d.lineNo}
		d.streams[prefix] = c
		d.order = append(d.order, c)
	}
	return c
}

// collector gathers the documents of one stream (one pod's lines).
type collector struct {
	d         *decoder
	prefix    string
	firstLine int
	lines     int // lines seen
	found     int // reports and problems found
	// crispSpoke: a line of crisp's own (an error, a panic): the stream is
	// crisp's, not a sidecar's that kubectl logs --all-containers shows.
	crispSpoke bool

	buf   []byte // the document being collected
	start int    // its first line
	// cuts are the document's lines with a stderr line of crisp's inside
	// (stderrAt): CRI-O's
	// conmon logs a long stdout line in pieces, cut where its read buffer
	// ends, and may log a stderr line between them, so such a line may be
	// one half of a report line, crisp's stderr line, and then the other
	// half. A document that does not read is tried again without them.
	cuts     []cut
	stamp    time.Time
	depth    int
	inString bool
	escaped  bool
}

func (c *collector) line(line []byte, stamp time.Time) {
	c.lines++
	if bytes.HasPrefix(line, []byte("crisp:")) || bytes.HasPrefix(line, []byte("panic:")) || bytes.HasPrefix(line, []byte("fatal error:")) {
		c.crispSpoke = true
	}
	trimmed := bytes.TrimLeft(line, " \t")
	// The line after one with crisp's line inside is the rest of the cut
	// report line, indented or not.
	afterCut := len(c.cuts) > 0 && c.cuts[len(c.cuts)-1].to == len(c.buf)
	if c.buf != nil && !afterCut && !continues(line) {
		if len(line) == 0 || line[0] != '{' {
			return // another stream's line in the middle of the document
		}
		// A new document: the one being collected was cut short.
		c.abandon(fmt.Sprintf("line %d starts another document", c.d.lineNo))
	}
	if c.buf == nil {
		if len(trimmed) == 0 || trimmed[0] != '{' {
			return
		}
		c.start, c.stamp, c.depth, c.inString, c.escaped = c.d.lineNo, stamp, 0, false, false
		c.buf = make([]byte, 0, 4096)
		line = trimmed
	}
	if len(c.buf) > 0 {
		if at := stderrAt(line); at > 0 {
			c.cuts = append(c.cuts, cut{from: len(c.buf) + at, to: len(c.buf) + len(line) + 1})
		} else if !afterCut && len(c.cuts) > 0 && string(line) == "}" {
			// An indented report's last line: its end, whatever crisp's
			// line did to the count of quotes and braces.
			c.buf = append(c.buf, line...)
			c.finish()
			return
		}
	}
	for i, b := range line {
		c.buf = append(c.buf, b)
		if c.scan(b) {
			c.finish()
			if rest := bytes.TrimSpace(line[i+1:]); len(rest) > 0 && rest[0] == '{' {
				c.line(rest, stamp) // another document on the same line
				c.lines--
			}
			return
		}
	}
	c.buf = append(c.buf, '\n')
	if len(c.buf) > maxDoc {
		c.abandon(fmt.Sprintf("it is over %d bytes", maxDoc))
	}
}

// continues reports whether line can be the next line of an indented JSON
// document: empty, indented, or closing a brace or bracket.
func continues(line []byte) bool {
	return len(line) == 0 || line[0] == ' ' || line[0] == '\t' || line[0] == '}' || line[0] == ']'
}

// scan tracks the nesting outside strings; it reports true when the
// document's outermost brace closes.
func (c *collector) scan(b byte) bool {
	switch {
	case c.escaped:
		c.escaped = false
	case c.inString:
		switch b {
		case '\\':
			c.escaped = true
		case '"':
			c.inString = false
		}
	case b == '"':
		c.inString = true
	case b == '{' || b == '[':
		c.depth++
	case b == '}' || b == ']':
		c.depth--
		return c.depth == 0
	}
	return false
}

func (c *collector) where() string {
	if c.prefix != "" {
		return fmt.Sprintf("%s:%d %s", c.d.name, c.start, c.prefix)
	}
	return fmt.Sprintf("%s:%d", c.d.name, c.start)
}

func (c *collector) problem(err string) {
	c.found++
	c.d.problems = append(c.d.problems, Problem{Source: c.where(), Err: err})
}

// abandon drops the document being collected; if it looked like a report,
// that is a problem.
func (c *collector) abandon(why string) {
	if c.buf == nil {
		return
	}
	if c.repaired() {
		return
	}
	if looksLikeReport(c.buf) {
		c.problem("a report that is cut short: " + why)
	}
	c.buf, c.cuts = nil, nil
}

// cut is a line of the document that may hold a stderr line of crisp's,
// from its start to the line's end (its newline included).
type cut struct{ from, to int }

// tallyLine is smoke's verdict on stderr ("50 passed, 1 failed, 13
// skipped"), which it writes before a JSON or YAML report.
var tallyLine = regexp.MustCompile(`\d+ passed, \d+ failed(, \d+ skipped)?$`)

// stderrAt is where a line crisp writes on stderr beside a report starts
// inside line (an error, "crisp: ...", or smoke's verdict), or -1.
func stderrAt(line []byte) int {
	if at := bytes.Index(line, []byte("crisp: ")); at >= 0 {
		return at
	}
	// The regexp only where the words are: run on every line of a
	// report it was a quarter of merging a thousand reports.
	if !bytes.Contains(line, []byte(" passed, ")) {
		return -1
	}
	if m := tallyLine.FindIndex(line); m != nil {
		return m[0]
	}
	return -1
}

// repaired reads the document without its lines of crisp's, one at a time
// and then all, each joining the halves around it; it reports whether one
// of them was a report (then taken, as finish takes one).
func (c *collector) repaired() bool {
	if len(c.cuts) == 0 {
		return false
	}
	variants := make([][]byte, 0, len(c.cuts)+1)
	for _, k := range c.cuts {
		variants = append(variants, append(append([]byte(nil), c.buf[:k.from]...), c.buf[k.to:]...))
	}
	if len(c.cuts) > 1 {
		var all []byte
		prev := 0
		for _, k := range c.cuts {
			all = append(all, c.buf[prev:k.from]...)
			prev = k.to
		}
		variants = append(variants, append(all, c.buf[prev:]...))
	}
	for _, v := range variants {
		var raw json.RawMessage
		if json.NewDecoder(bytes.NewReader(v)).Decode(&raw) != nil {
			continue
		}
		if run, isReport, err := parseReport(raw); err == nil && isReport {
			c.buf, c.cuts = nil, nil
			c.take(run)
			return true
		}
	}
	return false
}

func (c *collector) finish() {
	buf := c.buf
	run, isReport, err := parseReport(buf)
	if err != nil && c.repaired() {
		return
	}
	c.buf, c.cuts = nil, nil
	switch {
	case err != nil && (isReport || looksLikeReport(buf)):
		c.problem(err.Error())
	case err == nil && isReport:
		c.take(run)
	}
}

// take adds a report read from the document.
func (c *collector) take(run Run) {
	c.found++
	run.Source = c.where()
	if run.Node == "" {
		run.Node = "(unnamed " + c.where() + ")"
	}
	if run.Time.IsZero() {
		run.Time = c.stamp
	}
	c.d.docs = append(c.d.docs, Doc{Run: run})
}

// looksLikeReport is a cheap guess at whether broken JSON was meant to be
// a report, so that a report cut short is not taken for a log line.
func looksLikeReport(b []byte) bool {
	return bytes.Contains(b, []byte(`"schemaVersion"`)) ||
		(bytes.Contains(b, []byte(`"checks"`)) && bytes.Contains(b, []byte(`"passed"`))) ||
		(bytes.Contains(b, []byte(`"results"`)) && bytes.Contains(b, []byte(`"summary"`)))
}

// head is what tells a report's kind, and what both kinds share.
type head struct {
	Schema  *int    `json:"schemaVersion"`
	Kind    string  `json:"kind"`
	Node    string  `json:"node"`
	Time    string  `json:"time"`
	Error   string  `json:"error"`
	Checks  present `json:"checks"`
	Passed  *int    `json:"passed"`
	Results present `json:"results"`
	Summary present `json:"summary"`
}

// present records that a field is there without copying it (the checks
// are most of a report).
type present bool

func (p *present) UnmarshalJSON([]byte) error { *p = true; return nil }

// parseReport reads one JSON document: isReport is false for JSON that is
// no report (other log lines); err is set for a report it cannot read.
func parseReport(b []byte) (run Run, isReport bool, err error) {
	var h head
	if err := json.Unmarshal(b, &h); err != nil {
		return Run{}, false, jsonError(err)
	}
	kind := h.Kind
	if kind == "" && h.Schema == nil { // reports from before the schema was versioned
		switch {
		case bool(h.Checks) && h.Passed != nil:
			kind = probe.KindSmoke
		case bool(h.Results && h.Summary):
			kind = probe.KindProbe
		default:
			return Run{}, false, nil
		}
	}
	if kind != probe.KindSmoke && kind != probe.KindProbe && kind != doctor.Kind {
		if h.Schema == nil {
			return Run{}, false, nil // JSON of some other program
		}
		return Run{}, true, fmt.Errorf("report of node %q has kind %q; crisp report reads smoke, probe and doctor reports", h.Node, kind)
	}
	newest := probe.SchemaVersion
	if kind == doctor.Kind {
		newest = doctor.SchemaVersion // doctor's shape has its own version
	}
	if h.Schema != nil && *h.Schema > newest {
		return Run{}, true, fmt.Errorf("%s report of node %q has schemaVersion %d; this crisp reads up to %d: use a newer crisp report", kind, h.Node, *h.Schema, newest)
	}
	if h.Schema != nil && *h.Schema < 1 {
		return Run{}, true, fmt.Errorf("%s report of node %q has schemaVersion %d, which no crisp writes (versions start at 1): the report was not made by crisp smoke or probe, or was altered", kind, h.Node, *h.Schema)
	}
	switch kind {
	case probe.KindSmoke:
		run, err = parseSmoke(b)
	case doctor.Kind:
		run, err = parseDoctor(b)
	default:
		run, err = parseProbe(b)
	}
	if err != nil {
		err = jsonError(err)
		if h.Error != "" {
			err = fmt.Errorf("%w; the run says: %s", err, h.Error)
		}
		return Run{}, true, fmt.Errorf("%s report of node %q: %w", kind, h.Node, err)
	}
	run.Kind, run.Node = kind, h.Node
	if h.Time != "" {
		if run.Time, err = time.Parse(time.RFC3339Nano, h.Time); err != nil {
			return Run{}, true, fmt.Errorf("%s report of node %q: time %q is not an RFC 3339 time", kind, h.Node, h.Time)
		}
	}
	if h.Error != "" {
		// The run did not finish (out of time, interrupted): whatever its
		// checks say, the node has not shown that it works.
		run.Cells = append(run.Cells, Cell{Check: kind + "/finished", Outcome: Fail, Detail: h.Error})
	}
	return run, true, nil
}

// jsonError says what is wrong with a document in a reader's words.
func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "the document"
		}
		return fmt.Errorf("field %s is a JSON %s where a report has %s", field, te.Value, jsonType(te.Type.Kind().String()))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	return err
}

func jsonType(goKind string) string {
	switch goKind {
	case "int", "int32", "int64", "float64":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return goKind
}
