// Package crictldiff is the differential test of crisp against crictl: a
// corpus of crictl command lines (every verb, every flag and shorthand of
// crictl's help, and its documentation's examples) run through both clients
// on the same mock runtime state, with their exit statuses, their stdout
// (normalised only for IDs and times) and the objects they leave behind
// compared. The differences crisp means to have are listed in one place,
// docs/crictl.md's table, which the test reads.
package crictldiff

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// Case is one line of the corpus: crictl's arguments, with placeholders
// for the fixture's objects (see Expand).
type Case struct {
	Line string // as written, the case's name and its key in the list of differences
	Args []string
}

// readOnlyVerbs change nothing in the runtime nor in crictl.yaml.
var readOnlyVerbs = map[string]bool{
	"version": true, "info": true, "runtime-config": true, "pods": true, "ps": true,
	"inspect": true, "inspectp": true, "inspecti": true, "images": true, "image": true, "img": true,
	"imagefsinfo": true, "stats": true, "statsp": true, "metricdescs": true, "metricsp": true,
	"logs": true, "exec": true,
}

// ReadOnly says whether c changes nothing: a read-only verb, or no verb
// (--version), or config without --set. The test runs these on one
// runtime and checks that they did change nothing.
func (c Case) ReadOnly() bool {
	for i, a := range c.Args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		if i > 0 && !strings.HasPrefix(c.Args[i-1], "--") && len(c.Args[i-1]) == 2 && c.Args[i-1] != "-D" && c.Args[i-1] != "-v" {
			continue // the value of -r, -i, -c or -t
		}
		if a == "config" {
			return !slices.Contains(c.Args, "--set")
		}
		return readOnlyVerbs[a]
	}
	return true
}

// ParseCorpus reads a corpus: one command line a line, after the binary's
// name; '#' starts a comment line; arguments split at blanks, single or
// double quotes keep blanks inside an argument.
func ParseCorpus(r io.Reader) ([]Case, error) {
	var cases []Case
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		args, err := splitArgs(line)
		if err != nil {
			return nil, fmt.Errorf("corpus line %d: %w", n, err)
		}
		if prev, ok := seen[line]; ok {
			return nil, fmt.Errorf("corpus line %d repeats line %d: %s", n, prev, line)
		}
		seen[line] = n
		cases = append(cases, Case{Line: line, Args: args})
	}
	return cases, sc.Err()
}

func splitArgs(line string) ([]string, error) {
	var args []string
	var cur strings.Builder
	var quote rune
	inArg := false
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inArg = r, true
		case r == ' ' || r == '\t':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args, nil
}

// Fixture is what the placeholders of a case stand for in one runtime.
type Fixture struct {
	Pod, Container, Exited string // IDs
	Dir                    string // pod.json, ctr.json and crictl.yaml are here
}

// Expand replaces {POD}, {CTR}, {EXITED} and {DIR} in args.
func (f Fixture) Expand(args []string) []string {
	r := strings.NewReplacer("{POD}", f.Pod, "{CTR}", f.Container, "{EXITED}", f.Exited, "{DIR}", f.Dir)
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = r.Replace(a)
	}
	return out
}

var (
	rfc3339  = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?( ?(Z|[+-]\d{2}:?\d{2})( [A-Z]{3,4})?)?`)
	ago      = regexp.MustCompile(`(About an? \w+|Less than a second|\d+ (second|minute|hour|day|week|month|year)s?) ago`)
	unixNano = regexp.MustCompile(`("(createdAt|startedAt|finishedAt|timestamp|created_at|started_at|finished_at)":\s*)"?\d{9,}"?`)
	unixYAML = regexp.MustCompile(`((createdAt|startedAt|finishedAt|timestamp):\s*)"?\d{9,}"?`)
	hexID    = regexp.MustCompile(`\b[0-9a-f]{12,64}\b`)
	pid      = regexp.MustCompile(`("pid":\s*|pid:\s*)\d+`)
	port     = regexp.MustCompile(`127\.0\.0\.1:\d+`)
	mockDir  = regexp.MustCompile(`/tmp/crisp[-\w]*`)
	blanks   = regexp.MustCompile(`[ \t]+`)
)

// Normalize makes an output comparable across two runtimes: the fixture's
// IDs become their placeholders, other IDs <ID> (process IDs <PID>, the
// streaming server's port <PORT>, the mock's folders <TMP>), times <TIME>
// and ages <AGO>; runs of blanks become one (a table's columns are as wide as the
// values before normalising).
func (f Fixture) Normalize(out string) string {
	for id, name := range map[string]string{f.Pod: "{POD}", f.Container: "{CTR}", f.Exited: "{EXITED}"} {
		if id == "" {
			continue
		}
		out = strings.ReplaceAll(out, id, name)
		out = strings.ReplaceAll(out, id[:13], name) // crictl's tables truncate IDs to 13
	}
	if f.Dir != "" {
		out = strings.ReplaceAll(out, f.Dir, "{DIR}")
	}
	out = rfc3339.ReplaceAllString(out, "<TIME>")
	out = ago.ReplaceAllString(out, "<AGO>")
	out = unixNano.ReplaceAllString(out, "${1}<TIME>")
	out = unixYAML.ReplaceAllString(out, "${1}<TIME>")
	out = hexID.ReplaceAllString(out, "<ID>")
	out = pid.ReplaceAllString(out, "${1}<PID>")
	out = port.ReplaceAllString(out, "127.0.0.1:<PORT>")
	out = mockDir.ReplaceAllString(out, "<TMP>")
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(blanks.ReplaceAllString(l, " "), " ")
	}
	return strings.Join(lines, "\n")
}

// Difference is one row of docs/crictl.md's table: a corpus line whose
// outcome differs from crictl's on purpose, in what (status, stdout or
// state; "all" for each; "figures": stdout shows live figures, CPU and
// memory of real processes, and is not compared; "order": the lines are
// compared, not their order, which the runtime's listing decides).
type Difference struct {
	Line, What, Why string
}

// ParseDifferences reads the rows of the table under the heading
// "## Intentional differences" in docs/crictl.md: | `corpus line` | what | why |.
func ParseDifferences(r io.Reader) (map[string]Difference, error) {
	return ParseDifferencesUnder(r, IntentionalHeading)
}

// Headings of docs/crictl.md's tables of differences.
const (
	IntentionalHeading = "## Intentional differences"
	// ContainerdHeading's table lists the lines that differ on containerd
	// only (the e2e suite runs the corpus there), because of the runtime.
	ContainerdHeading = "## Differences on containerd"
)

// ParseDifferencesUnder reads the rows of the table under heading, as
// ParseDifferences does.
func ParseDifferencesUnder(r io.Reader, heading string) (map[string]Difference, error) {
	diffs := map[string]Difference{}
	sc := bufio.NewScanner(r)
	in := false
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "## ") {
			in = line == heading
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) != 3 {
			return nil, fmt.Errorf("docs/crictl.md line %d: want | `line` | what | why |, got %q", n, line)
		}
		d := Difference{
			Line: strings.Trim(strings.TrimSpace(cells[0]), "`"),
			What: strings.TrimSpace(cells[1]),
			Why:  strings.TrimSpace(cells[2]),
		}
		switch d.What {
		case "status", "stdout", "state", "all", "figures", "order":
		default:
			return nil, fmt.Errorf("docs/crictl.md line %d: what is status, stdout, state, all, figures or order, not %q", n, d.What)
		}
		if _, dup := diffs[d.Line]; dup {
			return nil, fmt.Errorf("docs/crictl.md line %d: %q listed twice", n, d.Line)
		}
		diffs[d.Line] = d
	}
	return diffs, sc.Err()
}

// SameStatus is the one mapping of exit statuses: crictl exits 1 for
// every failure of its own, where crisp says which kind (1 a failed
// call, 2 bad usage, 125 crisp's own failure in a command that passes a
// remote status through); a remote command's status passes through both.
func SameStatus(crictl, crisp int) bool {
	if crictl == crisp {
		return true
	}
	return crictl == 1 && (crisp == 2 || crisp == 125)
}
