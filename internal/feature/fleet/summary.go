package fleet

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/crisp-cri/crisp/internal/feature/report"
)

// The table a run prints for a reader: at a thousand nodes a row per node
// and a line per failure are a thousand lines that say one thing. So the
// nodes of each kind are grouped by result and the failed ones by what
// failed (its signature: the failed checks with their details, the node's
// own names taken out), failed groups first, the biggest first. Each group
// names a few nodes; -o json, -o yaml and --junit list every node.

// maxNamed is how many nodes a group names.
const maxNamed = 8

// maxMatrix is the most columns (groups of nodes with the same outcomes)
// for which the checks-by-nodes matrix is printed: beyond, it is too wide
// to read and the groups say it better.
const maxMatrix = 6

// group is nodes with the same result: ok, or the same failures.
type group struct {
	failed bool
	sig    []string // the failed checks' signatures
	nodes  []string
	runs   []report.Run
	cut    bool // a signature dropped a detail's node-specific tail
}

// extras start the parts of a detail that only some nodes of a group have
// (the run reads events and logs for the first few unfinished nodes).
var extras = []string{"; events: ", "; crisp's log ends: "}

var (
	podNameRE  = regexp.MustCompile(`(crisp-(?:smoke|probe|doctor)-[0-9a-f]+)-[0-9]+(?:-r[0-9]+)?`)
	hexIDRE    = regexp.MustCompile(`\b[0-9a-f]{12,}\b`)
	fracTimeRE = regexp.MustCompile(`\b[0-9]+\.[0-9]+(?:ns|µs|us|ms|s)\b`)
)

// signature is a failure's detail with what differs from node to node taken
// out: the node's name, the run's pod names, container IDs, measured times,
// and the tails only some nodes have. It reports whether a tail was cut.
func signature(node, check, detail string) (string, bool) {
	cut := false
	for _, e := range extras {
		if i := strings.Index(detail, e); i >= 0 {
			detail, cut = detail[:i], true
		}
	}
	detail = podNameRE.ReplaceAllString(detail, "$1-*")
	if len(node) > 1 {
		detail = strings.ReplaceAll(detail, node, "NODE")
	}
	detail = hexIDRE.ReplaceAllString(detail, "…")
	detail = fracTimeRE.ReplaceAllString(detail, "…s")
	return check + ": " + detail, cut
}

// groups groups the runs of one kind, failed groups first, biggest first.
func groups(runs []report.Run) []*group {
	var out []*group
	byKey := map[string]*group{}
	for _, r := range runs {
		var sig []string
		cut := false
		for _, c := range r.Cells {
			if c.Outcome == report.Fail {
				s, sc := signature(r.Node, c.Check, c.Detail)
				sig, cut = append(sig, s), cut || sc
			}
		}
		key := strings.Join(sig, "\x00")
		g := byKey[key]
		if g == nil {
			g = &group{failed: len(sig) > 0, sig: sig}
			byKey[key] = g
			out = append(out, g)
		}
		g.nodes, g.runs, g.cut = append(g.nodes, r.Node), append(g.runs, r), g.cut || cut
	}
	slices.SortStableFunc(out, func(a, b *group) int {
		if a.failed != b.failed {
			if a.failed {
				return -1
			}
			return 1
		}
		return len(b.nodes) - len(a.nodes)
	})
	return out
}

// WriteTable writes fl for a reader (-o table): per kind, a line with the
// counts, the groups (with the runtimes their nodes run, from runtimes by
// node name, when known: a runtime upgrade is what a fleet check is for),
// and the checks-by-nodes matrix when it is narrow; then the unreadable
// reports, the notes, and the verdict. Every string from the cluster or a
// node goes through report.Printable.
func WriteTable(w io.Writer, fl *report.Fleet, runtimes map[string]string) error {
	p := &linePrinter{w: w}
	for _, kind := range fl.Kinds() {
		runs := fl.RunsOf(kind)
		gs := groups(runs)
		failed := 0
		for _, g := range gs {
			if g.failed {
				failed += len(g.nodes)
			}
		}
		p.f("%s: %d nodes, %d failed, %d ok\n", strings.ToUpper(kind), len(runs), failed, len(runs)-failed)
		width := len(fmt.Sprint(len(runs)))
		indent := strings.Repeat(" ", width+8)
		for _, g := range gs {
			writeGroup(p, g, width, indent, runtimes)
		}
		writeMatrix(p, fl.MatrixOf(kind))
		p.f("\n")
	}
	writeProblems(p, fl)
	p.f("%s\n", fl.Verdict())
	return p.err
}

func writeGroup(p *linePrinter, g *group, width int, indent string, runtimes map[string]string) {
	result, lines := "ok  ", []string{tallyRange(g.runs)}
	if g.failed {
		result, lines = "FAIL", g.sig
		if len(g.nodes) == 1 {
			// One node: its own words, whole.
			lines = nil
			for _, c := range g.runs[0].Cells {
				if c.Outcome == report.Fail {
					lines = append(lines, c.Check+": "+c.Detail)
				}
			}
		}
	}
	p.f("  %*d %s %s\n", width, len(g.nodes), result, report.Printable(lines[0]))
	for _, l := range lines[1:] {
		p.f("%s+ %s\n", indent, report.Printable(l))
	}
	if on := runtimeCounts(g.nodes, runtimes); on != "" {
		p.f("%son %s\n", indent, report.Printable(on))
	}
	named := make([]string, 0, maxNamed)
	for _, n := range g.nodes[:min(len(g.nodes), maxNamed)] {
		named = append(named, report.Printable(n))
	}
	more := ""
	if len(g.nodes) > maxNamed {
		more = fmt.Sprintf(" and %d more", len(g.nodes)-maxNamed)
	}
	p.f("%s%s%s\n", indent, strings.Join(named, ", "), more)
	if g.failed && g.cut && len(g.nodes) > 1 {
		// What the run found out about one of them (events, crisp's log).
		for _, r := range g.runs {
			for _, c := range r.Cells {
				for _, e := range extras {
					if i := strings.Index(c.Detail, e); c.Outcome == report.Fail && i >= 0 {
						p.f("%se.g. %s: %s\n", indent, report.Printable(r.Node), report.Printable(c.Detail[i+2:]))
						return
					}
				}
			}
		}
	}
}

// runtimeCounts says which runtimes nodes run: "containerd://1.6.20 (400),
// cri-o://1.34.0 (70)", most first; "" when no node's is known.
func runtimeCounts(nodes []string, runtimes map[string]string) string {
	count := map[string]int{}
	var order []string
	known := false
	for _, n := range nodes {
		rt := runtimes[n]
		known = known || rt != ""
		if rt == "" {
			rt = "runtime unknown"
		}
		if count[rt] == 0 {
			order = append(order, rt)
		}
		count[rt]++
	}
	if !known {
		return ""
	}
	slices.SortFunc(order, func(a, b string) int {
		if count[a] != count[b] {
			return count[b] - count[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(order))
	for i, rt := range order {
		parts[i] = fmt.Sprintf("%s (%d)", rt, count[rt])
	}
	return strings.Join(parts, ", ")
}

// tallyRange sums up the checks of passing nodes: "47 passed, 4
// warnings", with ranges where nodes differ.
func tallyRange(runs []report.Run) string {
	var parts []string
	for _, o := range []struct {
		outcome report.Outcome
		name    string
	}{{report.Pass, "passed"}, {report.Warn, "warnings"}, {report.Skip, "skipped"}, {report.Refused, "refused"}, {report.Error, "errors"}} {
		lo, hi := -1, 0
		for _, r := range runs {
			n := r.Count(o.outcome)
			if lo < 0 || n < lo {
				lo = n
			}
			hi = max(hi, n)
		}
		switch {
		case hi == 0 && o.outcome != report.Pass:
		case lo == hi:
			parts = append(parts, fmt.Sprintf("%d %s", hi, o.name))
		default:
			parts = append(parts, fmt.Sprintf("%d-%d %s", lo, hi, o.name))
		}
	}
	return strings.Join(parts, ", ")
}

// writeMatrix writes the checks-by-nodes matrix when it is narrow.
func writeMatrix(p *linePrinter, m report.Matrix) {
	if len(m.Columns) > maxMatrix || len(m.Checks) == 0 {
		return
	}
	labels := make([]string, len(m.Columns))
	widths := make([]int, len(m.Columns))
	for i, c := range m.Columns {
		labels[i] = report.Printable(c.Label())
		widths[i] = max(len(labels[i]), len("FAIL"), len("refused"))
	}
	checkWidth := len("CHECK")
	for _, c := range m.Checks {
		checkWidth = max(checkWidth, len(report.Printable(c)))
	}
	var line strings.Builder
	emit := func() {
		p.f("%s\n", strings.TrimRight(line.String(), " "))
		line.Reset()
	}
	p.f("\n")
	fmt.Fprintf(&line, "%-*s", checkWidth, "CHECK")
	for i, l := range labels {
		fmt.Fprintf(&line, "  %-*s", widths[i], l)
	}
	emit()
	for i, check := range m.Checks {
		fmt.Fprintf(&line, "%-*s", checkWidth, report.Printable(check))
		for j, c := range m.Columns {
			o := string(c.Outcomes[i])
			switch c.Outcomes[i] {
			case "":
				o = "-"
			case report.Fail:
				o = "FAIL"
			}
			fmt.Fprintf(&line, "  %-*s", widths[j], o)
		}
		emit()
	}
}

// writeProblems writes the unreadable reports, grouped by their error, and
// the notes.
func writeProblems(p *linePrinter, fl *report.Fleet) {
	var order []string
	bySig := map[string][]report.Problem{}
	for _, pr := range fl.Problems {
		s, _ := signature("", "", pr.Err)
		if bySig[s] == nil {
			order = append(order, s)
		}
		bySig[s] = append(bySig[s], pr)
	}
	for _, s := range order {
		prs := bySig[s]
		sources := make([]string, 0, maxNamed)
		for _, pr := range prs[:min(len(prs), maxNamed)] {
			sources = append(sources, report.Printable(pr.Source))
		}
		more := ""
		if len(prs) > maxNamed {
			more = fmt.Sprintf(" and %d more", len(prs)-maxNamed)
		}
		p.f("UNREADABLE %d: %s\n  %s%s\n", len(prs), report.Printable(strings.TrimPrefix(s, ": ")), strings.Join(sources, ", "), more)
	}
	for i, n := range fl.Notes {
		if i == maxNamed {
			p.f("note: and %d more notes\n", len(fl.Notes)-maxNamed)
			break
		}
		p.f("note: %s\n", report.Printable(n))
	}
}

// linePrinter writes formatted text and keeps the first error.
type linePrinter struct {
	w   io.Writer
	err error
}

func (p *linePrinter) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}
