package probe

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/crisp-cri/crisp/internal/cli/output"
)

// WriteTable writes bench's figures as tab-separated rows (the caller
// aligns them), then what the throughput figures measure.
func (r *BenchReport) WriteTable(w io.Writer) error {
	output.Row(w, "CALL", "TRANSPORT", "PROTOCOL", "FIGURE", "MEDIAN", "MIN", "MAX", "RUNS")
	for _, res := range r.Results {
		proto := res.Name
		if res.Auto {
			proto += " (auto)"
		}
		for _, f := range res.Figures {
			switch {
			case f.Skipped != "":
				output.Row(w, res.Call, res.Transport, proto, f.Name, "skipped: "+f.Skipped, "", "", "")
			case f.Error != "":
				output.Row(w, res.Call, res.Transport, proto, f.Name, "error (see below)", "", "", "")
			default:
				output.Row(w, res.Call, res.Transport, proto, f.Name, figure(f.Median, f.Unit), figure(f.Min, f.Unit), figure(f.Max, f.Unit), f.Runs)
			}
		}
	}
	_, err := fmt.Fprintf(w, "\nthroughput runs move %d bytes each; MB/s is 10^6 bytes per second\n", r.Size)
	return err
}

// figure is a measured value in its unit; NaN (nothing measured) is "-".
func figure(v float64, unit string) string {
	if math.IsNaN(v) {
		return "-"
	}
	if unit == "ms" {
		return fmt.Sprintf("%.2f ms", v)
	}
	return fmt.Sprintf("%.0f %s", v, unit)
}

// Failures lists, one line each, the calls no protocol was usable for and
// the figures that could not be measured; none means bench succeeded.
func (r *BenchReport) Failures() []string {
	failed := append([]string(nil), r.Unusable...)
	for _, res := range r.Results {
		for _, fig := range res.Figures {
			if fig.Error != "" {
				failed = append(failed, fmt.Sprintf("%s %s: %s", res.Protocol, fig.Name, fig.Error))
			}
		}
	}
	return failed
}

// Tally is smoke's last line: "N passed, N failed" (", N skipped").
func (r *SmokeReport) Tally() string {
	s := fmt.Sprintf("%d passed, %d failed", r.Passed, r.Failed)
	if r.Skipped > 0 {
		s += fmt.Sprintf(", %d skipped", r.Skipped)
	}
	return s
}

// WriteLine writes the check as smoke prints it when it finishes.
func (c SmokeCheck) WriteLine(w io.Writer) error {
	label := map[Outcome]string{Pass: "PASS", Fail: "FAIL", Skip: "SKIP", Warn: "WARN"}[c.Outcome]
	auto := ""
	if c.Auto && c.Protocol != nil {
		auto = " (auto)"
	}
	_, err := fmt.Fprintf(w, "%s  %s%s  %s  [%s]\n", label, c.Name(), auto, c.Detail, c.Duration)
	return err
}

// WriteJUnitFile writes the JUnit XML to a new file at path
// (output.WriteJUnitFile, doctor's writer too: what sits there is
// replaced, never written through); errors name the --junit flag.
func (r *SmokeReport) WriteJUnitFile(path string, started time.Time) error {
	return output.WriteJUnitFile(path, r.JUnit(started))
}

// WriteTable writes the probe matrix as tab-separated rows (the caller
// aligns them), then the details that matter (every detail with verbose),
// then what --transport auto picks and the gaps.
func (rep *ProbeReport) WriteTable(w io.Writer, verbose bool) {
	output.Row(w, "CALL", "TRANSPORT", "PROTOCOL", "RESULT", "NEGOTIATED", "RPC", "UPGRADE", "CHECKS")
	var notes []string
	for _, r := range rep.Results {
		result := r.Kind()
		if result == "refused" {
			result = fmt.Sprintf("refused %d", r.Status)
		}
		negotiated, upgrade := r.Negotiated, r.Upgrade.String()
		if negotiated == "" {
			negotiated = "-"
		}
		if !r.Accepted && r.Status == 0 {
			upgrade = "-"
		}
		var checks []string
		for _, c := range r.Checks {
			checks = append(checks, c.Name+":"+string(c.Outcome))
			if c.Outcome == Fail || (verbose && c.Outcome != Pass) || (verbose && c.Detail != "") {
				notes = append(notes, fmt.Sprintf("%s %s %s: %s: %s", r.Call, r.Transport, r.Name, c.Name, c.Detail))
			}
		}
		if len(checks) == 0 {
			checks = []string{"-"}
		}
		output.Row(w, r.Call, r.Transport, r.Name, result, negotiated, r.RPC, upgrade, strings.Join(checks, " "))
		if !r.Accepted {
			why := r.Reason
			if why == "" {
				why = r.Error
			}
			notes = append(notes, fmt.Sprintf("%s %s %s: %s: %s", r.Call, r.Transport, r.Name, noteKind(r), firstLineOf(why)))
		}
	}
	p := &linePrinter{w: w}
	p.f("\n")
	if len(notes) > 0 {
		p.f("Details:\n")
		for _, n := range notes {
			p.f("  %s\n", n)
		}
		p.f("\n")
	}
	p.f("--transport auto picks:\n")
	for _, a := range rep.Summary.Auto {
		if a.Protocol == nil {
			why := a.Why
			if why == "" { // a report from an older crisp
				why = "every step of the auto order was refused"
			}
			p.f("  %s:\tnothing (%s)\n", a.Call, why)
			continue
		}
		p.f("  %s:\t%s %s\t(step: %s)\n", a.Call, a.Protocol.Transport, a.Protocol.Name, a.Step)
	}
	if len(rep.Summary.Gaps) == 0 {
		p.f("Gaps: none\n")
		return
	}
	p.f("Gaps:\n")
	for _, g := range rep.Summary.Gaps {
		p.f("  - %s\n", g)
	}
}

// linePrinter writes to a table's buffer, whose Flush reports errors.
type linePrinter struct{ w io.Writer }

func (p *linePrinter) f(format string, args ...any) {
	_, _ = fmt.Fprintf(p.w, format, args...) // a table's writer is a buffer; its Flush reports errors
}

// noteKind words why a result was not accepted, for the details.
func noteKind(r Result) string {
	switch r.Kind() {
	case "timeout":
		return "timed out"
	case "failed":
		return "failed"
	}
	return "refused"
}

func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// ReachedNothing fails a probe in which no handshake got an HTTP answer
// (every attempt failed before the server could accept or refuse: a
// certificate crisp cannot verify, a client certificate the server wants,
// an unreachable streaming server). The matrix is printed either way; the
// error, with the first attempt's reason, makes the exit status 1.
func (rep *ProbeReport) ReachedNothing() error {
	if len(rep.Results) == 0 {
		return nil
	}
	for _, r := range rep.Results {
		if r.Accepted || r.Status != 0 || r.Error == "" {
			return nil
		}
	}
	return fmt.Errorf("probe: no streaming handshake got an answer from the runtime; the first failed with: %s", rep.Results[0].Error)
}
