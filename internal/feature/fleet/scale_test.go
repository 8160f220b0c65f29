package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/feature/report"
)

// A fleet of 500: 470 pass, 20 never start (the run's timeout ends them),
// 7 fail the port-forward round trip, 3 are not Ready. Messages from the
// cluster carry terminal escapes.
const (
	scaleOK, scaleStuck, scaleForward, scaleDown = 470, 20, 7, 3
	scaleNodes                                   = scaleOK + scaleStuck + scaleForward + scaleDown
)

func scaleFleet() *fakeAPI {
	api := newFake()
	forward := `{"schemaVersion":1,"kind":"smoke","node":%q,"checks":[{"call":"exec","name":"echo","outcome":"pass"},{"call":"port-forward","transport":"spdy","protocol":"portforward.k8s.io","name":"port-forward-round-trip","outcome":"fail","detail":"sent 64 KiB to port 7777, 0 bytes came back: EOF"}]}`
	for i := range scaleNodes {
		name := fmt.Sprintf("node-%04d", i)
		switch {
		case i < scaleOK:
			api.nodes = append(api.nodes, readyNode(name, true))
			api.script[name] = finishes(0)
			api.logs[name] = smokeJSON(name, "pass")
		case i < scaleOK+scaleStuck:
			api.nodes = append(api.nodes, readyNode(name, true))
			api.script[name] = func(poll int, st *corev1.PodStatus) {
				stuck(poll, st)
				st.InitContainerStatuses[0].State.Waiting.Message = "pulling\x1b[2J image"
			}
		case i < scaleOK+scaleStuck+scaleForward:
			api.nodes = append(api.nodes, readyNode(name, true))
			api.script[name] = finishes(1)
			api.logs[name] = fmt.Sprintf(forward, name)
		default:
			api.nodes = append(api.nodes, readyNode(name, false))
		}
	}
	return api
}

// scaleLines is the run without a terminal, shared by the tests that read
// its lines and its table.
var scaleLines struct {
	once     sync.Once
	fl       *report.Fleet
	api      *fakeAPI
	progress string
}

func scaleRunLines(t *testing.T) (*report.Fleet, *fakeAPI, string) {
	t.Helper()
	scaleLines.once.Do(func() { scaleLines.fl, scaleLines.api, scaleLines.progress = scaleRun(t, false) })
	if scaleLines.fl == nil {
		t.Fatal("the shared run failed")
	}
	return scaleLines.fl, scaleLines.api, scaleLines.progress
}

func scaleRun(t *testing.T, live bool) (*report.Fleet, *fakeAPI, string) {
	t.Helper()
	api := scaleFleet()
	r, progress := runner(api, 3*time.Second)
	r.Live = live
	fl, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(fl.Runs) != scaleNodes {
		t.Fatalf("%d runs, want %d", len(fl.Runs), scaleNodes)
	}
	return fl, api, progress.String()
}

var finalLine = fmt.Sprintf("crisp fleet smoke: %d nodes: 0 pending, 0 running, %d ok, %d failed (", scaleNodes, scaleOK, scaleNodes-scaleOK)

// On a terminal: one summary line redrawn in place, no line per node.
func TestScaleLiveProgressIsOneLine(t *testing.T) {
	_, _, progress := scaleRun(t, true)
	if n := strings.Count(progress, "\n"); n != 1 {
		t.Errorf("%d lines on the terminal, want the summary line alone:\n%q", n, lastBytes(progress, 2000))
	}
	last := progress[strings.LastIndex(progress, "\r\x1b[K")+len("\r\x1b[K"):]
	if !strings.HasPrefix(last, finalLine) {
		t.Errorf("the last drawing is %q, want it to start %q", last, finalLine)
	}
	if strings.Contains(progress, "node-0") {
		t.Errorf("a node named on the live line")
	}
	// Every drawing is one whole summary line.
	for _, d := range strings.Split(progress, "\r\x1b[K")[1:] {
		if d != "" && !strings.HasPrefix(d, "crisp fleet smoke: 500 nodes: ") {
			t.Fatalf("a drawing that is not the summary: %q", d)
		}
	}
}

// Without a terminal: a line per node state change, every node's ending
// once, and the summary line last.
func TestScaleLinesPerStateChange(t *testing.T) {
	_, api, progress := scaleRunLines(t)
	lines := strings.Split(strings.TrimSuffix(progress, "\n"), "\n")
	if !strings.HasPrefix(lines[len(lines)-1], finalLine) {
		t.Errorf("last line %q, want %q", lines[len(lines)-1], finalLine)
	}
	ends := map[string]int{}
	perNode := map[string]int{}
	nodeLine := regexp.MustCompile(`^crisp fleet: (node-\d{4}): (.*)$`)
	for _, l := range lines[:len(lines)-1] {
		m := nodeLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("a line that is no node's state: %q", l)
		}
		perNode[m[1]]++
		if strings.HasPrefix(m[2], "ok after") || strings.HasPrefix(m[2], "FAIL") {
			ends[m[1]]++
		}
		if strings.Contains(l, "\x1b") {
			t.Fatalf("an escape reached the log: %q", l)
		}
	}
	if len(ends) != scaleNodes {
		t.Errorf("%d nodes ended in the log, want %d", len(ends), scaleNodes)
	}
	for n, c := range ends {
		if c != 1 {
			t.Errorf("%s ended %d times", n, c)
		}
	}
	// created, Pending (waiting), running, ok: four for a passing node.
	if c := perNode["node-0000"]; c != 4 {
		t.Errorf("node-0000 has %d lines, want 4", c)
	}
	if len(lines) > 4*scaleNodes+1 {
		t.Errorf("%d lines for %d nodes", len(lines), scaleNodes)
	}
	// Requests per node: one create, one log read; lists are per poll, not per node.
	want := map[string]int{"CreatePod": scaleNodes - scaleDown, "PodLog": scaleOK + scaleForward, "PodEvents": scaleStuck, "DeletePods": 1, "ListNodes": 1}
	for verb, n := range want {
		if api.calls[verb] != n {
			t.Errorf("%s: %d calls, want %d", verb, api.calls[verb], n)
		}
	}
}

// The final table: grouped by result and failure, failed groups first and
// biggest first, a few names each; JSON and JUnit name every node.
func TestScaleTableGroups(t *testing.T) {
	fl, _, _ := scaleRunLines(t)
	var b bytes.Buffer
	if err := WriteTable(&b, fl, nil); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) > 20 {
		t.Errorf("%d lines for %d nodes:\n%s", len(lines), scaleNodes, text)
	}
	want := []string{
		"SMOKE: 500 nodes, 30 failed, 470 ok",
		"   20 FAIL smoke/report: did not finish within --timeout 3s: pod kube-system/crisp-smoke-abc123-* Pending; crisp-target-x waiting: ContainerCreating pulling\\x1b[2J image, crisp waiting: PodInitializing",
		"           node-0470, node-0471, node-0472, node-0473, node-0474, node-0475, node-0476, node-0477 and 12 more",
		"    7 FAIL port-forward/spdy portforward.k8s.io/port-forward-round-trip: sent 64 KiB to port 7777, 0 bytes came back: EOF; the target's status is unknown, so whether its echo server listened on port 7777 is too",
		"           node-0490, node-0491, node-0492, node-0493, node-0494, node-0495, node-0496",
		"    3 FAIL smoke/report: the node is not Ready (KubeletNotReady: PLEG is not healthy)",
		"           node-0497, node-0498, node-0499",
		"  470 ok   1 passed",
		"           node-0000, node-0001, node-0002, node-0003, node-0004, node-0005, node-0006, node-0007 and 462 more",
	}
	if got := strings.Join(lines[:len(want)], "\n"); got != strings.Join(want, "\n") {
		t.Errorf("table:\n%s\nwant it to start:\n%s", text, strings.Join(want, "\n"))
	}
	if lines[len(lines)-1] != "smoke: 500 nodes, 30 failed" {
		t.Errorf("verdict %q", lines[len(lines)-1])
	}
	if strings.Contains(text, "\x1b") {
		t.Error("an escape from the cluster reached the table")
	}

	var j bytes.Buffer
	if err := fl.Write(&j, "json"); err != nil {
		t.Fatal(err)
	}
	var back report.Fleet
	if err := json.Unmarshal(j.Bytes(), &back); err != nil || len(back.Runs) != scaleNodes {
		t.Errorf("JSON: %d runs, err %v", len(back.Runs), err)
	}
	if !strings.Contains(j.String(), `pulling\u001b[2J image`) {
		t.Error("JSON is not exact: the escape should be kept as data")
	}
	var x bytes.Buffer
	if err := fl.WriteJUnit(&x); err != nil {
		t.Fatal(err)
	}
	var s output.JUnitSuites
	if err := xml.Unmarshal(x.Bytes(), &s); err != nil || len(s.Suites) != scaleNodes || s.Failures != scaleNodes-scaleOK {
		t.Errorf("JUnit: %d suites, %d failures, err %v", len(s.Suites), s.Failures, err)
	}
}

// Signatures take out what differs from node to node, and only that.
func TestSignature(t *testing.T) {
	for _, tc := range []struct{ node, detail, want string }{
		{"node-17", "did not finish within --timeout 2m0s: pod kube-system/crisp-smoke-0a1b2c-17 Running; events: FailedMount: x", "c: did not finish within --timeout 2m0s: pod kube-system/crisp-smoke-0a1b2c-* Running"},
		{"node-17", "pod crisp-probe-0a1b2c-3-r2 on node-17: container 4f3a2b1c0d9e8f7a6b5c exited after 1.83s", "c: pod crisp-probe-0a1b2c-* on NODE: container … exited after …s"},
		{"a", "exit 137 after 5s", "c: exit 137 after 5s"},
	} {
		if got, _ := signature(tc.node, "c", tc.detail); got != tc.want {
			t.Errorf("signature(%q)\n= %q\nwant %q", tc.detail, got, tc.want)
		}
	}
}

func lastBytes(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// The run counts its requests (-v prints them): per node one create and
// one log read; the lists are per poll.
func TestRequestsCounted(t *testing.T) {
	api := newFake("node-a", "node-b")
	for _, n := range []string{"node-a", "node-b"} {
		api.script[n] = finishes(0)
		api.logs[n] = smokeJSON(n, "pass")
	}
	r, _ := runner(api, time.Minute)
	r.SaveLogs = t.TempDir()
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := r.Requests()
	for _, want := range []string{"CREATE pods 2", "GET pods/log 2", "DELETECOLLECTION pods 1", "LIST nodes 1"} {
		if !strings.Contains(got, want) {
			t.Errorf("requests %q lack %q", got, want)
		}
	}
	for _, n := range []string{"node-a", "node-b"} {
		b, err := os.ReadFile(filepath.Join(r.SaveLogs, n+".smoke.log"))
		if err != nil || string(b) != smokeJSON(n, "pass") {
			t.Errorf("%s's saved log: %q, %v", n, b, err)
		}
	}
}
