package containerd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// summaryFile is where TestMain writes what ran, relative to the repository:
// `go test` shows nothing of a passing package, and CI's log must show that
// the containerd suite ran on both runtimes rather than skipped (the Makefile
// prints it).
const summaryFile = ".work/e2e-containerd.txt"

// testResult is one test's (or one runtime subtest's) outcome.
type testResult struct {
	name, status string
	runtime      string // the runtime subtest's runtime; "" for a test of its own
	took         time.Duration
}

// runAndReport runs the tests, stops the harnesses (stopHarnesses, when
// not nil), looks for goroutines left running and writes the summary file;
// it returns the test binary's exit code.
func runAndReport(m *testing.M, stopHarnesses func()) int {
	start := time.Now()
	code := m.Run()
	took := time.Since(start)
	if stopHarnesses != nil {
		stopHarnesses()
	}
	// The runtimes' subtests run at once, so a goroutine left behind is
	// looked for once all of them ended (startBackground waits for its own)
	// and the harnesses stopped (restartCRIO reaps the crio it started).
	if err := goleak.Find(); err != nil {
		fmt.Fprintf(os.Stderr, "containerd e2e: goroutines left running after the tests: %v\n", err)
		code = 1
	}
	if suite.repo == "" {
		return code
	}
	report := summary(code, took)
	path := filepath.Join(suite.repo, summaryFile)
	err := os.MkdirAll(filepath.Dir(path), 0o755)
	if err == nil {
		err = os.WriteFile(path, []byte(report), 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "containerd e2e: writing the summary: %v\n", err)
	}
	return code
}

// summary: one line per runtime (ran against what, or why not), one per
// result, then the counts per runtime and in all.
func summary(code int, took time.Duration) string {
	var b strings.Builder
	for _, r := range suite.runtimes {
		if r.harness == nil {
			fmt.Fprintf(&b, "containerd e2e suite: %s NOT RUN: %s\n", r.spec.name, r.reason)
			continue
		}
		fmt.Fprintf(&b, "containerd e2e suite: %s (%s) at %s", r.spec.name, r.harness.Version, r.harness.Endpoint)
		if r.upTook > 0 {
			fmt.Fprintf(&b, " (scripts/%s took %v)", r.spec.kind.up, r.upTook.Round(10*time.Millisecond))
		}
		b.WriteString("\n")
	}
	type counts struct{ pass, fail, skip int }
	all, per := counts{}, map[string]*counts{}
	suite.resultsMu.Lock()
	for _, res := range suite.results {
		c := per[res.runtime]
		if c == nil {
			c = &counts{}
			per[res.runtime] = c
		}
		for _, c := range []*counts{c, &all} {
			switch res.status {
			case "PASS":
				c.pass++
			case "FAIL":
				c.fail++
			default:
				c.skip++
			}
		}
		fmt.Fprintf(&b, "  %s  %s (%v)\n", res.status, res.name, res.took.Round(10*time.Millisecond))
	}
	suite.resultsMu.Unlock()
	for _, r := range suite.runtimes {
		c := per[r.spec.name]
		if c == nil {
			c = &counts{}
		}
		fmt.Fprintf(&b, "containerd e2e suite: %s: %d passed, %d failed, %d skipped\n", r.spec.name, c.pass, c.fail, c.skip)
	}
	if c := per[""]; c != nil { // tests of every runtime at once (the interop matrix)
		fmt.Fprintf(&b, "containerd e2e suite: all runtimes at once: %d passed, %d failed, %d skipped\n", c.pass, c.fail, c.skip)
	}
	fmt.Fprintf(&b, "containerd e2e suite: %d passed, %d failed, %d skipped in %v (exit %d)\n",
		all.pass, all.fail, all.skip, took.Round(100*time.Millisecond), code)
	return b.String()
}

// track records t's outcome for the summary once it ends; runtime names the
// runtime of a runtime subtest ("" for a test that is not one).
func track(t testing.TB, runtime string) {
	suite.resultsMu.Lock()
	defer suite.resultsMu.Unlock()
	if suite.tracked == nil {
		suite.tracked = map[testing.TB]bool{}
	}
	if suite.tracked[t] {
		return
	}
	suite.tracked[t] = true
	start := time.Now()
	t.Cleanup(func() {
		status := "PASS"
		if t.Failed() {
			status = "FAIL"
		} else if t.Skipped() {
			status = "SKIP"
		}
		suite.resultsMu.Lock()
		suite.results = append(suite.results, testResult{t.Name(), status, runtime, time.Since(start)})
		suite.resultsMu.Unlock()
	})
}
