package probe

import (
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/crisp-cri/crisp/internal/output"
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

// WriteJUnitFile writes the JUnit XML (WriteJUnit) to a file at path;
// errors name the --junit flag.
func (r *SmokeReport) WriteJUnitFile(path string, started time.Time) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	if err := r.WriteJUnit(f, started); err != nil {
		_ = f.Close() // the write error says more
		return fmt.Errorf("--junit %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--junit %s: %w", path, err)
	}
	return nil
}
