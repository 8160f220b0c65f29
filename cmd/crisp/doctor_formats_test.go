package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// doctorDoc is the doctor report's shape as docs/doctor.md documents it,
// declared here independently of internal/feature/doctor's types and read
// by a plain YAML parser.
type doctorDoc struct {
	SchemaVersion int    `yaml:"schemaVersion" json:"schemaVersion"`
	Kind          string `yaml:"kind" json:"kind"`
	Node          string `yaml:"node" json:"node"`
	Mode          string `yaml:"mode" json:"mode"`
	OK            bool   `yaml:"ok" json:"ok"`
	Runtime       struct {
		Flavour string `yaml:"flavour" json:"flavour"`
	} `yaml:"runtime" json:"runtime"`
	Hops []struct {
		Hop       string  `yaml:"hop" json:"hop"`
		Outcome   string  `yaml:"outcome" json:"outcome"`
		LatencyMs float64 `yaml:"latencyMs" json:"latencyMs"`
		Signature string  `yaml:"signature" json:"signature"`
	} `yaml:"hops" json:"hops"`
	Repeat *struct {
		Runs       int     `yaml:"runs" json:"runs"`
		FailedRuns int     `yaml:"failedRuns" json:"failedRuns"`
		IntervalMs float64 `yaml:"intervalMs" json:"intervalMs"`
	} `yaml:"repeat" json:"repeat"`
}

func (d doctorDoc) hops() string {
	var s []string
	for _, h := range d.Hops {
		s = append(s, h.Hop+"="+h.Outcome)
	}
	return strings.Join(s, " ")
}

func readJUnit(t *testing.T, path string) junitDoc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc junitDoc
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s is not JUnit XML: %v\n%s", path, err, b)
	}
	if len(doc.Suites) != 1 || doc.Suites[0].Name != "crisp doctor" {
		t.Fatalf("%s: want one suite \"crisp doctor\", got %+v", path, doc.Suites)
	}
	return doc
}

// caseNames lists a suite's testcases: "runtime tcp ...".
func caseNames(s junitSuite) string {
	var n []string
	for _, c := range s.Cases {
		n = append(n, c.Name)
	}
	return strings.Join(n, " ")
}

// crisp doctor's machine outputs, through the built binary against the
// mock: -o yaml on a healthy path, --junit with one case per hop, the exit
// statuses help/doctor.txt documents (0 healthy, 1 a hop failed, 2 bad
// flags), and crisp report merging a healthy and a failing node's -o json.
func TestDoctorFormatsThroughTheBinary(t *testing.T) {
	skipInShort(t)
	dir := t.TempDir()
	const healthyHops = "runtime=pass runtime-ready=pass target=pass exec-rpc=pass tcp=pass tls=skip upgrade-websocket-v5=pass upgrade-spdy=pass upgrade-websocket-v4=pass exec=pass attach=pass port-forward=pass"

	healthy, healthyCtr := tickerContainer(t, mockruntime.Config{})
	echo := fmt.Sprint(testkit.Echo(t))
	junit := filepath.Join(dir, "healthy.xml")
	stdout, stderr, code := crispRun(t, healthy.Endpoint, "doctor", healthyCtr, "--port", echo, "-o", "yaml", "--junit", junit, "--node-name", "node-a")
	if code != 0 {
		t.Fatalf("doctor on a healthy mock exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if strings.HasPrefix(strings.TrimSpace(stdout), "{") {
		t.Fatalf("-o yaml printed JSON:\n%s", stdout)
	}
	var rep doctorDoc
	if err := yaml.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("-o yaml does not parse: %v\n%s", err, stdout)
	}
	if rep.SchemaVersion != 1 || rep.Kind != "doctor" || rep.Mode != "node" || rep.Node != "node-a" || !rep.OK || rep.Runtime.Flavour != "crisp-mock" {
		t.Errorf("-o yaml report: %+v", rep)
	}
	if got := rep.hops(); got != healthyHops {
		t.Fatalf("-o yaml hops\n got %s\nwant %s", got, healthyHops)
	}
	for _, h := range rep.Hops {
		if h.Outcome == "pass" && h.LatencyMs <= 0 {
			t.Errorf("hop %s passed with latencyMs %v", h.Hop, h.LatencyMs)
		}
	}
	suite := readJUnit(t, junit).Suites[0]
	var hopNames []string
	for _, h := range rep.Hops {
		hopNames = append(hopNames, h.Hop)
	}
	if got, want := caseNames(suite), strings.Join(hopNames, " "); got != want || suite.Tests != len(rep.Hops) {
		t.Errorf("JUnit: %d tests, cases %s; want %d, one per hop: %s", suite.Tests, got, len(rep.Hops), want)
	}
	if suite.Failures != 0 || suite.Skipped != 1 {
		t.Errorf("JUnit of a healthy path: %d failures, %d skipped; want 0 and 1 (tls on http)", suite.Failures, suite.Skipped)
	}
	for _, c := range suite.Cases {
		if c.Failure != nil || (c.Skipped != nil) != (c.Name == "tls") {
			t.Errorf("JUnit case %s: failure %+v skipped %+v", c.Name, c.Failure, c.Skipped)
		}
	}

	stdout, stderr, code = crispRun(t, healthy.Endpoint, "doctor", healthyCtr, "-o", "json", "--node-name", "node-a")
	if code != 0 {
		t.Fatalf("doctor -o json on a healthy mock exited %d\nstderr:\n%s", code, stderr)
	}
	a := filepath.Join(dir, "a.json")
	if err := os.WriteFile(a, []byte(stdout), 0o600); err != nil {
		t.Fatal(err)
	}

	// Every upgrade refused: the walk fails at the last step of auto's
	// order, exit 1, and the JUnit's one failure is that hop's.
	refuse, err := streamserver.ParseFault("refuse-upgrade")
	if err != nil {
		t.Fatal(err)
	}
	refusing, refusingCtr := tickerContainer(t, mockruntime.Config{Faults: []streamserver.Fault{refuse}})
	junit = filepath.Join(dir, "refused.xml")
	stdout, stderr, code = crispRun(t, refusing.Endpoint, "doctor", refusingCtr, "-o", "json", "--junit", junit, "--node-name", "node-b")
	if code != 1 {
		t.Fatalf("doctor on refused upgrades exited %d, want %d\nstdout:\n%s\nstderr:\n%s", code, 1, stdout, stderr)
	}
	if !strings.Contains(stderr, "broken at hop upgrade-websocket-v4") {
		t.Errorf("stderr does not give the verdict:\n%s", stderr)
	}
	var failed doctorDoc
	if err := json.Unmarshal([]byte(stdout), &failed); err != nil {
		t.Fatalf("-o json: %v\n%s", err, stdout)
	}
	const refusedHops = "runtime=pass runtime-ready=pass target=pass exec-rpc=pass tcp=pass tls=skip upgrade-websocket-v5=note upgrade-spdy=note upgrade-websocket-v4=fail"
	if got := failed.hops(); got != refusedHops || failed.OK {
		t.Fatalf("refused upgrades: ok %v, hops\n got %s\nwant %s", failed.OK, got, refusedHops)
	}
	suite = readJUnit(t, junit).Suites[0]
	if suite.Failures != 1 || suite.Tests != len(failed.Hops) {
		t.Errorf("JUnit: %d failures of %d tests; want 1 of %d", suite.Failures, suite.Tests, len(failed.Hops))
	}
	for _, c := range suite.Cases {
		if (c.Failure != nil) != (c.Name == "upgrade-websocket-v4") {
			t.Errorf("JUnit case %s: failure %+v; want the failure at upgrade-websocket-v4 alone", c.Name, c.Failure)
		}
		if c.Failure != nil && (!strings.Contains(c.Failure.Message, "403") || !strings.Contains(c.Failure.Text, "fix:")) {
			t.Errorf("JUnit failure %+v does not carry the refusal and the fix", c.Failure)
		}
	}
	b := filepath.Join(dir, "b.json")
	if err := os.WriteFile(b, []byte(stdout), 0o600); err != nil {
		t.Fatal(err)
	}

	// crisp report merges them: both nodes named, the failing hop too,
	// exit 1 as a node failed; the healthy one alone passes.
	stdout, stderr, code = crispRun(t, healthy.Endpoint, "report", a, b)
	if code != 1 {
		t.Fatalf("report of a failing node exited %d, want %d\nstdout:\n%s\nstderr:\n%s", code, 1, stdout, stderr)
	}
	for _, want := range []string{"\nnode-a ", "\nnode-b ", "\nFAIL doctor node-b node/upgrade-websocket-v4: ", "refused every protocol", "\ndoctor: 2 nodes, 1 failed\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report does not name %q:\n%s", want, stdout)
		}
	}
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && (f[0] == "node-a" || f[0] == "node-b") {
			if want := map[string]string{"node-a": "ok", "node-b": "FAIL"}[f[0]]; f[1] != want {
				t.Errorf("report line %q: want %s %s", line, f[0], want)
			}
		}
	}
	if stdout, stderr, code = crispRun(t, healthy.Endpoint, "report", a); code != 0 {
		t.Errorf("report of the healthy node alone exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	// Bad flags are exit 2.
	if _, stderr, code = crispRun(t, healthy.Endpoint, "doctor", healthyCtr, "--interval", "soon"); code != 2 {
		t.Errorf("doctor --interval soon exited %d, want %d\nstderr:\n%s", code, 2, stderr)
	}
}

// --repeat 3 --interval 300ms through the binary: the flag reaches the
// walk (the report records it) and the runs are spaced, so the three runs
// take at least two intervals.
func TestDoctorRepeatIntervalThroughTheBinary(t *testing.T) {
	skipInShort(t)
	env, ctr := tickerContainer(t, mockruntime.Config{})
	const interval = 300 * time.Millisecond
	start := time.Now()
	stdout, stderr, code := crispRun(t, env.Endpoint, "doctor", ctr, "--repeat", "3", "--interval", interval.String(), "-o", "json")
	took := time.Since(start)
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, stderr)
	}
	var rep doctorDoc
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if rep.Repeat == nil || rep.Repeat.Runs != 3 || rep.Repeat.FailedRuns != 0 || rep.Repeat.IntervalMs != float64(interval.Milliseconds()) {
		t.Fatalf("repeat summary %+v, want 3 runs, none failed, intervalMs %d", rep.Repeat, interval.Milliseconds())
	}
	if took < 2*interval {
		t.Errorf("3 runs %s apart took %s, less than two intervals", interval, took)
	}
	t.Logf("3 runs took %s", took)
}
