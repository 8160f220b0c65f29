package report

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/feature/probe"
)

// The fixtures in testdata are real reports: crisp smoke and probe -o json
// against the mock runtime, node-b's smoke with --port on a closed port.

func load(t *testing.T, names ...string) *Fleet {
	t.Helper()
	var paths []string
	for _, n := range names {
		paths = append(paths, filepath.Join("testdata", n))
	}
	f, err := Load(context.Background(), paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestTwoNodesOneFailing(t *testing.T) {
	f := load(t, "smoke-pass.json", "smoke-fail.json")
	if len(f.Runs) != 2 || f.Runs[0].Node != "node-a" || f.Runs[1].Node != "node-b" {
		t.Fatalf("runs = %+v, want node-a and node-b", f.Runs)
	}
	if f.Runs[0].Failed() || !f.Runs[1].Failed() {
		t.Errorf("node-a failed %v, node-b failed %v: want false, true", f.Runs[0].Failed(), f.Runs[1].Failed())
	}
	if f.OK() || !errors.Is(f.Check(), ErrFailed) {
		t.Errorf("the fleet passed with a failing node: %v", f.Check())
	}
	var text bytes.Buffer
	if err := f.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"node-a", "node-b", "port-forward/spdy portforward.k8s.io/port-forward-round-trip", "FAIL smoke node-b", "smoke: 2 nodes, 1 failed"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}

	var md bytes.Buffer
	if err := f.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## ❌ crisp report", "| node-b | FAIL |", "| node-a | ok |", "<details>"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}

	var x bytes.Buffer
	if err := f.WriteJUnit(&x); err != nil {
		t.Fatal(err)
	}
	var parsed output.JUnitSuites
	if err := xml.Unmarshal(x.Bytes(), &parsed); err != nil {
		t.Fatalf("JUnit does not parse: %v\n%s", err, x.String())
	}
	failures := 0
	for _, s := range parsed.Suites {
		for _, c := range s.Cases {
			if c.Failure != nil {
				failures++
			}
		}
	}
	if len(parsed.Suites) != 2 || parsed.Failures != f.Failures() || failures != f.Failures() || failures == 0 {
		t.Errorf("JUnit: %d suites, failures attr %d, failed cases %d; want 2 suites and %d failures", len(parsed.Suites), parsed.Failures, failures, f.Failures())
	}
}

func TestPassingFleet(t *testing.T) {
	f := load(t, "smoke-pass.json", "probe.json")
	if err := f.Check(); err != nil {
		t.Fatalf("a passing fleet failed: %v", err)
	}
	if got := f.Kinds(); len(got) != 2 || got[0] != probe.KindSmoke {
		t.Errorf("kinds = %v, want smoke then probe", got)
	}
	var x bytes.Buffer
	if err := f.WriteJUnit(&x); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(x.Bytes(), []byte(`failures="0"`)) {
		t.Errorf("JUnit of a passing fleet counts failures:\n%.400s", x.String())
	}
}

// kubectl logs output: log lines around the reports, a --prefix on every
// line of one, and a line that opens a brace it never closes.
func TestKubectlLogsStream(t *testing.T) {
	f := load(t, "kubectl-logs.txt")
	if len(f.Runs) != 2 || len(f.Problems) != 0 {
		t.Fatalf("runs %d, problems %v: want 2 reports and no problem", len(f.Runs), f.Problems)
	}
	if f.Runs[1].Node != "node-b" || !strings.HasPrefix(f.Runs[1].Source, "testdata/kubectl-logs.txt:") {
		t.Errorf("second run: %s from %s", f.Runs[1].Node, f.Runs[1].Source)
	}
}

// A report cut short (the pod was killed while printing) fails the fleet.
func TestTruncatedReportIsAProblem(t *testing.T) {
	data, err := os.ReadFile("testdata/smoke-pass.json")
	if err != nil {
		t.Fatal(err)
	}
	cut := string(data[:len(data)/2]) + "\nE1201 pod killed\n"
	docs, problems, err := Decode("cut", strings.NewReader(cut))
	if err != nil || len(docs) != 0 || len(problems) != 1 {
		t.Fatalf("docs %d, problems %v, err %v: want one problem", len(docs), problems, err)
	}
	f := Merge(docs, problems)
	if f.OK() || f.Failures() != 1 {
		t.Errorf("a cut report: OK %v, failures %d", f.OK(), f.Failures())
	}
}

func TestDecodeEdges(t *testing.T) {
	for _, tc := range []struct {
		name         string
		in           string
		docs, probs  int
		node, detail string
	}{
		{"compact on one line", `{"schemaVersion":1,"kind":"smoke","node":"n1","checks":[{"call":"exec","name":"echo","outcome":"pass"}],"passed":1}`, 1, 0, "n1", ""},
		{"two on one line", `{"kind":"smoke","node":"n1","checks":[{"call":"exec","name":"e","outcome":"pass"}]} {"kind":"smoke","node":"n2","checks":[{"call":"exec","name":"e","outcome":"fail"}]}`, 2, 0, "n1", ""},
		{"braces in strings", `{"kind":"smoke","node":"n}1","checks":[{"call":"exec","name":"e","outcome":"pass","detail":"\"{[}"}]}`, 1, 0, "n}1", ""},
		{"json log line", `{"level":"info","msg":"hello"}`, 0, 0, "", ""},
		{"newer schema", `{"schemaVersion":99,"kind":"smoke","node":"n1","checks":[]}`, 0, 1, "", "schemaVersion 99"},
		{"unknown outcome", `{"kind":"smoke","node":"n1","checks":[{"call":"exec","name":"e","outcome":"maybe"}]}`, 0, 1, "", "unknown outcome"},
		{"no checks", `{"schemaVersion":1,"kind":"smoke","node":"n1","checks":[],"passed":0}`, 0, 1, "", "no checks"},
		{"pre-schema smoke", `{"container":"c","checks":[{"call":"exec","name":"e","outcome":"pass"}],"passed":1}`, 1, 0, "(unnamed x:1)", ""},
		{"tally says failed", `{"kind":"smoke","node":"n1","checks":[{"call":"exec","name":"e","outcome":"pass"}],"failed":1}`, 1, 0, "n1", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs, probs, err := Decode("x", strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if len(docs) != tc.docs || len(probs) != tc.probs {
				t.Fatalf("docs %d problems %v, want %d and %d", len(docs), probs, tc.docs, tc.probs)
			}
			if tc.node != "" && docs[0].Run.Node != tc.node {
				t.Errorf("node %q, want %q", docs[0].Run.Node, tc.node)
			}
			if tc.detail != "" && !strings.Contains(probs[0].Err, tc.detail) {
				t.Errorf("problem %q lacks %q", probs[0].Err, tc.detail)
			}
		})
	}
}

func TestDuplicateNodeKeepsTheLater(t *testing.T) {
	in := `{"kind":"smoke","node":"n1","checks":[{"call":"exec","name":"e","outcome":"fail"}]}
{"kind":"smoke","node":"n1","checks":[{"call":"exec","name":"e","outcome":"pass"}]}`
	docs, probs, err := Decode("x", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	f := Merge(docs, probs)
	if len(f.Runs) != 1 || !f.OK() || len(f.Notes) != 1 {
		t.Errorf("runs %d OK %v notes %v: want the later, passing report and a note", len(f.Runs), f.OK(), f.Notes)
	}
}

// The decoder reads what the probe package writes: a report built from its
// types round-trips, so a renamed JSON field fails here, not in a fleet.
func TestReadsProbeTypes(t *testing.T) {
	rep := probe.SmokeReport{Origin: probe.NewOrigin(probe.KindSmoke, "n1"), Failed: 1, Checks: []probe.SmokeCheck{
		{Call: "exec", Protocol: &probe.Protocol{Transport: "websocket", Name: "v5.channel.k8s.io"}, Auto: true,
			Check: probe.Check{Name: probe.SmokeEcho, Outcome: probe.Fail, Detail: "got nothing"}},
	}}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	docs, probs, err := Decode("x", bytes.NewReader(b))
	if err != nil || len(docs) != 1 || len(probs) != 0 {
		t.Fatalf("docs %d problems %v err %v", len(docs), probs, err)
	}
	got := docs[0].Run.Cells
	if len(got) != 1 || got[0].Check != "exec/websocket v5.channel.k8s.io/echo" || got[0].Outcome != Fail || got[0].Detail != "got nothing" {
		t.Errorf("cells = %+v", got)
	}
}

func TestMatrixGroupsIdenticalNodes(t *testing.T) {
	var in strings.Builder
	for _, n := range []string{"a", "b", "c"} {
		in.WriteString(`{"kind":"smoke","node":"` + n + `","checks":[{"call":"exec","name":"e","outcome":"pass"}]}` + "\n")
	}
	in.WriteString(`{"kind":"smoke","node":"d","checks":[{"call":"exec","name":"e","outcome":"fail"}]}` + "\n")
	docs, probs, err := Decode("x", strings.NewReader(in.String()))
	if err != nil {
		t.Fatal(err)
	}
	m := Merge(docs, probs).MatrixOf(probe.KindSmoke)
	if len(m.Columns) != 2 || m.Columns[0].Label() != "d" || m.Columns[1].Label() != "a (+2)" {
		t.Errorf("columns = %+v, want d then a (+2)", m.Columns)
	}
}

func TestProbeVerdicts(t *testing.T) {
	in := `{"schemaVersion":1,"kind":"probe","node":"n1","results":[
 {"call":"exec","transport":"websocket","protocol":"v5.channel.k8s.io","accepted":true,"checks":[{"name":"exit-code","outcome":"fail","detail":"x"}]},
 {"call":"exec","transport":"spdy","protocol":"v4.channel.k8s.io","accepted":true,"checks":[{"name":"exit-code","outcome":"fail","detail":"y"}]},
 {"call":"exec","transport":"spdy","protocol":"v5.channel.k8s.io","accepted":false,"status":403,"reason":"Forbidden"}],
 "summary":{"auto":[{"call":"exec","pick":{"transport":"websocket","protocol":"v5.channel.k8s.io"}},{"call":"attach"}],"gaps":[]}}`
	docs, _, err := Decode("x", strings.NewReader(in))
	if err != nil || len(docs) != 1 {
		t.Fatalf("docs %d err %v", len(docs), err)
	}
	got := map[string]Outcome{}
	for _, c := range docs[0].Run.Cells {
		got[c.Check] = c.Outcome
	}
	want := map[string]Outcome{"attach/auto": Fail, "exec/websocket v5.channel.k8s.io": Fail, "exec/spdy v4.channel.k8s.io": Warn, "exec/spdy v5.channel.k8s.io": Refused}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}
