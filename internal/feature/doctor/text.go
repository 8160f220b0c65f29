package doctor

import (
	"fmt"
	"io"
	"strings"

	"github.com/crisp-cri/crisp/internal/base/termsafe"
	"github.com/crisp-cri/crisp/internal/cli/output"
)

// WriteText writes the report for a terminal: one line per hop with its
// latency, then for each hop that failed, warned or noted something what
// was tried, the error, its meaning on this runtime and the fix, then (with
// --repeat) the failure groups and the latency percentiles, and last the
// verdict. What the runtime and the streaming server said goes through
// termsafe.Printable.
func (r *Report) WriteText(w io.Writer) error {
	tw := output.NewTabWriter(w)
	output.Row(tw, "HOP", "RESULT", "LATENCY", "DETAIL")
	for _, h := range r.Hops {
		detail := h.Detail
		if detail == "" {
			detail = h.Error
		}
		output.Row(tw, h.Name, strings.ToUpper(string(h.Outcome)), h.Latency, termsafe.Printable(firstLine(detail)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var b strings.Builder
	for _, h := range r.Hops {
		if h.Cause == "" && h.Error == "" {
			continue
		}
		writeExplained(&b, strings.ToUpper(string(h.Outcome))+" at hop "+h.Name, h, "  ")
	}
	if r.Repeat != nil {
		r.Repeat.writeText(&b)
	}
	if n := r.NodeSide; n != nil {
		fmt.Fprintf(&b, "\nNODE SIDE, walked on node %s by crisp doctor in a pod there\n", termsafe.Printable(or(n.Node, "?")))
		if n.Error != "" {
			b.WriteString(termsafe.Printable(n.Error) + "\n")
		} else if err := n.WriteText(&b); err != nil {
			return err
		}
		b.WriteString("\n")
	}
	b.WriteString(r.Verdict() + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeExplained writes a hop's tried, error, cause and fix lines.
func writeExplained(b *strings.Builder, title string, h Hop, indent string) {
	fmt.Fprintf(b, "\n%s\n", title)
	for _, l := range h.explanation() {
		fmt.Fprintf(b, "%s%-6s %s\n", indent, l[0]+":", termsafe.Printable(l[1]))
	}
}

// writeText writes the failure groups and the latency table.
func (r *Repeat) writeText(b *strings.Builder) {
	fmt.Fprintf(b, "\n%d runs, %d failed (%.1f%%)\n", r.Runs, r.FailedRuns, 100*float64(r.FailedRuns)/float64(max(r.Runs, 1)))
	for _, g := range r.Failures {
		title := fmt.Sprintf("FAIL at hop %s: %s: %d of %d runs (%.1f%%; %d reached the hop), first in run %d",
			g.Hop, termsafe.Printable(g.Signature), g.Count, r.Runs, 100*g.Rate, g.Reached, g.FirstRun)
		writeExplained(b, title, g.Example, "  ")
	}
	b.WriteString("\n")
	tw := output.NewTabWriter(b)
	output.Row(tw, "HOP", "N", "P50", "P90", "P99", "MAX")
	for _, l := range r.Latency {
		output.Row(tw, l.Hop, l.N, l.P50, l.P90, l.P99, l.Max)
	}
	_ = tw.Flush() // a strings.Builder does not fail
}
