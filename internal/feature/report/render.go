package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Verdict is the one-line summary: how many nodes, how many failed.
func (f *Fleet) Verdict() string {
	var parts []string
	for _, kind := range f.Kinds() {
		runs := f.RunsOf(kind)
		failed := 0
		for _, r := range runs {
			if r.Failed() {
				failed++
			}
		}
		parts = append(parts, fmt.Sprintf("%s: %d nodes, %d failed", kind, len(runs), failed))
	}
	if len(f.Problems) > 0 {
		parts = append(parts, fmt.Sprintf("%d unreadable reports", len(f.Problems)))
	}
	if len(parts) == 0 {
		return "no reports found"
	}
	return strings.Join(parts, "; ")
}

// WriteText writes the per-node table, the matrix of each kind, the
// failures with their details, the problems and the verdict.
func (f *Fleet) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	p := &printer{w: tw}
	for _, kind := range f.Kinds() {
		p.f("%s\n", strings.ToUpper(kind))
		p.f("NODE\tRESULT\tPASSED\tFAILED\tWARNINGS\tSKIPPED\tREFUSED\tSOURCE\n")
		for _, r := range f.RunsOf(kind) {
			p.f("%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\n", Printable(r.Node), result(r), r.Count(Pass), r.Count(Fail), r.Count(Warn), r.Count(Skip), r.Count(Refused)+r.Count(Error), Printable(r.Source))
		}
		p.f("\n")
		m := f.MatrixOf(kind)
		p.f("CHECK")
		for _, c := range m.Columns {
			p.f("\t%s", Printable(c.Label()))
		}
		p.f("\n")
		for i, check := range m.Checks {
			p.f("%s", Printable(check))
			for _, c := range m.Columns {
				p.f("\t%s", cellText(c.Outcomes[i]))
			}
			p.f("\n")
		}
		p.f("\n")
	}
	if p.err != nil {
		return p.err
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	p = &printer{w: w}
	f.writeGroups(p, "", Printable)
	f.writeFailures(p, "", Printable)
	p.f("%s\n", f.Verdict())
	return p.err
}

func result(r Run) string {
	if r.Failed() {
		return "FAIL"
	}
	return "ok"
}

// writeGroups names the nodes behind each grouped column; esc makes
// report text safe for the output (Printable, or cell for Markdown).
func (f *Fleet) writeGroups(p *printer, bullet string, esc func(string) string) {
	for _, kind := range f.Kinds() {
		for _, c := range f.MatrixOf(kind).Columns {
			if len(c.Nodes) > 1 {
				nodes := make([]string, len(c.Nodes))
				for i, n := range c.Nodes {
					nodes[i] = esc(n)
				}
				p.f("%s%s column %s: %s\n", bullet, kind, esc(c.Label()), strings.Join(nodes, " "))
			}
		}
	}
}

// writeFailures lists every failed check with its detail, the problems and
// the notes, each field through esc.
func (f *Fleet) writeFailures(p *printer, bullet string, esc func(string) string) {
	for _, r := range f.Runs {
		for _, c := range r.Cells {
			if c.Outcome == Fail {
				p.f("%sFAIL %s %s %s: %s\n", bullet, r.Kind, esc(r.Node), esc(c.Check), esc(c.Detail))
			}
		}
	}
	for _, pr := range f.Problems {
		p.f("%sUNREADABLE %s: %s\n", bullet, esc(pr.Source), esc(pr.Err))
	}
	for _, n := range f.Notes {
		p.f("%snote: %s\n", bullet, esc(n))
	}
}

// WriteMarkdown writes the report for a CI job summary (GitHub's
// $GITHUB_STEP_SUMMARY, GitLab's and others' Markdown).
func (f *Fleet) WriteMarkdown(w io.Writer) error {
	p := &printer{w: w}
	mark := "✅"
	if !f.OK() {
		mark = "❌"
	}
	p.f("## %s crisp report: %s\n\n", mark, cell(f.Verdict()))
	for _, kind := range f.Kinds() {
		p.f("### %s\n\n", kind)
		p.f("| node | result | passed | failed | warnings | skipped | refused |\n")
		p.f("| --- | --- | ---: | ---: | ---: | ---: | ---: |\n")
		for _, r := range f.RunsOf(kind) {
			p.f("| %s | %s | %d | %d | %d | %d | %d |\n", cell(r.Node), result(r), r.Count(Pass), r.Count(Fail), r.Count(Warn), r.Count(Skip), r.Count(Refused)+r.Count(Error))
		}
		m := f.MatrixOf(kind)
		p.f("\n<details><summary>%s matrix: %d checks by %d nodes</summary>\n\n", kind, len(m.Checks), len(f.RunsOf(kind)))
		p.f("| check |")
		for _, c := range m.Columns {
			p.f(" %s |", cell(c.Label()))
		}
		p.f("\n| --- |")
		for range m.Columns {
			p.f(" --- |")
		}
		p.f("\n")
		for i, check := range m.Checks {
			p.f("| %s |", cell(check))
			for _, c := range m.Columns {
				p.f(" %s |", cellText(c.Outcomes[i]))
			}
			p.f("\n")
		}
		p.f("\n</details>\n\n")
	}
	var b strings.Builder
	details := &printer{w: &b}
	f.writeGroups(details, "- ", cell)
	f.writeFailures(details, "- ", cell)
	if b.Len() > 0 {
		p.f("### Details\n\n%s", b.String())
	}
	return p.err
}

// printer writes formatted text and keeps the first error, so a report is
// written in straight lines and fails once.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}
