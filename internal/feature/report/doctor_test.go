package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/crisp-cri/crisp/internal/feature/doctor"
	"github.com/crisp-cri/crisp/internal/feature/probe"
)

// doctorDoc is a doctor report as doctor's JSON writes it (its Go types,
// marshalled: the JSON is the contract the parser reads).
func doctorDoc(t *testing.T, node string, hops []doctor.Hop, rep *doctor.Repeat) string {
	t.Helper()
	r := doctor.Report{Origin: probe.Origin{Schema: doctor.SchemaVersion, Kind: doctor.Kind, Node: node}, Mode: doctor.ModeNode, Hops: hops, Repeat: rep, OK: true}
	for _, h := range hops {
		if h.Failed() {
			r.OK = false
		}
	}
	if rep != nil && rep.FailedRuns > 0 {
		r.OK = false
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDoctorReportsMergeAcrossNodes(t *testing.T) {
	healthy := []doctor.Hop{{Name: "runtime", Outcome: doctor.Pass}, {Name: "upgrade-websocket-v5", Outcome: doctor.Note, Detail: "refused: HTTP 403"}, {Name: "exec", Outcome: doctor.Pass}}
	broken := []doctor.Hop{{Name: "runtime", Outcome: doctor.Pass}, {Name: "tcp", Outcome: doctor.Fail, Error: "dial tcp 127.0.0.1:1: connect: connection refused", Cause: "its streaming server is down"}}
	sporadic := &doctor.Repeat{Runs: 200, FailedRuns: 2, Failures: []doctor.FailureGroup{{Hop: "upgrade-spdy", Signature: "connection reset", Count: 2, Rate: 0.01}}}
	in := doctorDoc(t, "node-a", healthy, nil) + "\n" + doctorDoc(t, "node-b", broken, nil) + "\n" + doctorDoc(t, "node-c", healthy, sporadic)
	docs, problems, err := Decode("doctor.json", strings.NewReader(in))
	if err != nil || len(problems) != 0 {
		t.Fatalf("decode: %v %+v", err, problems)
	}
	f := Merge(docs, nil)
	if len(f.Runs) != 3 || f.OK() {
		t.Fatalf("want 3 doctor runs and a failed fleet: %+v", f.Runs)
	}
	a, b, c := f.Runs[0], f.Runs[1], f.Runs[2]
	if a.Kind != doctor.Kind || a.Failed() || a.Count(Pass) != 3 {
		t.Errorf("node-a: a note is a pass: %+v", a.Cells)
	}
	if !b.Failed() || b.Cells[1].Check != "node/tcp" || !strings.Contains(b.Cells[1].Detail, "connection refused: its streaming server is down") {
		t.Errorf("node-b: the failed hop carries the error and its meaning: %+v", b.Cells)
	}
	if !c.Failed() || !strings.Contains(c.Cells[len(c.Cells)-1].Detail, "2 of 200 runs (1.0%): connection reset") {
		t.Errorf("node-c: a sporadic failure fails its hop with the rate: %+v", c.Cells)
	}
	if v := f.Verdict(); !strings.Contains(v, "doctor: 3 nodes, 2 failed") {
		t.Errorf("verdict %q", v)
	}
}

// A workstation walk with --node-side: both halves' hops are cells, and a
// failed node half fails the node.
func TestDoctorNodeSideHopsMerge(t *testing.T) {
	top := doctor.Report{Origin: probe.Origin{Schema: doctor.SchemaVersion, Kind: doctor.Kind, Node: "node-a"}, Mode: doctor.ModeKubeconfig,
		Hops: []doctor.Hop{{Name: "api-server", Outcome: doctor.Pass}, {Name: "exec", Outcome: doctor.Fail, Error: "error dialing backend"}},
		NodeSide: &doctor.Report{Origin: probe.Origin{Schema: doctor.SchemaVersion, Kind: doctor.Kind, Node: "node-a"}, Mode: doctor.ModeNode,
			Hops: []doctor.Hop{{Name: "runtime", Outcome: doctor.Pass}, {Name: "tcp", Outcome: doctor.Fail, Error: "connection refused", Cause: "its streaming server is down"}}}}
	b, err := json.Marshal(top)
	if err != nil {
		t.Fatal(err)
	}
	docs, problems, err := Decode("doctor.json", strings.NewReader(string(b)))
	if err != nil || len(problems) != 0 || len(docs) != 1 {
		t.Fatalf("decode: %v %+v %d docs", err, problems, len(docs))
	}
	var checks []string
	for _, c := range docs[0].Run.Cells {
		checks = append(checks, c.Check+"="+string(c.Outcome))
	}
	if got, want := strings.Join(checks, " "), "kubeconfig/api-server=pass kubeconfig/exec=fail node/runtime=pass node/tcp=fail"; got != want {
		t.Errorf("cells %s, want %s", got, want)
	}
	top.NodeSide.Mode = doctor.ModeKubeconfig
	if b, err = json.Marshal(top); err != nil {
		t.Fatal(err)
	}
	if _, problems, _ := Decode("doctor.json", strings.NewReader(string(b))); len(problems) != 1 || !strings.Contains(problems[0].Err, "not the node half") {
		t.Errorf("a node side of the same mode: problems %+v", problems)
	}
}

func TestDoctorReportOfANewerSchemaIsAProblem(t *testing.T) {
	in := `{"schemaVersion": 99, "kind": "doctor", "node": "n", "mode": "node", "hops": []}`
	_, problems, err := Decode("x", strings.NewReader(in))
	if err != nil || len(problems) != 1 || !strings.Contains(problems[0].Err, "schemaVersion 99") {
		t.Fatalf("want one problem naming the schema: %v %+v", err, problems)
	}
}
