package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/crisp-cri/crisp/internal/feature/report"
)

const recordedSmoke = `crisp: smoke: connected
{
  "schemaVersion": 1,
  "kind": "smoke",
  "node": "crisp-node",
  "container": "crisp-target-abc",
  "checks": [
    {
      "call": "exec",
      "name": "exit-code",
      "outcome": "pass"
    }
  ],
  "passed": 1,
  "failed": 0
}
`

// What each kind of node is given reads, through crisp report's decoder,
// as check expects fleet to find it.
func TestKindsDecodeAsChecked(t *testing.T) {
	dir := t.TempDir()
	for _, sub := range []string{"pass", "fail", "logs"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "pass", "crisp-node.smoke.log"), []byte(recordedSmoke), 0o644); err != nil {
		t.Fatal(err)
	}
	failing := strings.Replace(strings.Replace(recordedSmoke, `"outcome": "pass"`, `"outcome": "fail"`, 1), `"failed": 0`, `"failed": 1`, 1)
	if err := os.WriteFile(filepath.Join(dir, "fail", "crisp-node.smoke.log"), []byte(failing), 0o644); err != nil {
		t.Fatal(err)
	}
	var cfg bytes.Buffer
	if err := config([]string{"-pass", filepath.Join(dir, "pass"), "-fail", filepath.Join(dir, "fail"), "-logs", filepath.Join(dir, "logs"), "-run-id", "x", "-namespace", "ns", "20"}, &cfg, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cfg.String(), "kind: Logs\nmetadata: {name: crisp-smoke-x-19, namespace: ns}") {
		t.Errorf("no Logs object for the last pod:\n%s", cfg.String())
	}
	for i := range 20 {
		raw, err := os.ReadFile(filepath.Join(dir, "logs", fmt.Sprintf("smoke-%04d.log", i)))
		if err != nil {
			t.Fatal(err)
		}
		docs, probs, err := report.Decode("x", bytes.NewReader(uncri(raw)))
		if err != nil {
			t.Fatal(err)
		}
		var got string
		switch {
		case len(probs) == 1 && strings.Contains(probs[0].Err, "cut short"):
			got = kindCut
		case len(probs) == 1 && strings.Contains(probs[0].Err, "schemaVersion"):
			got = kindSchema
		case len(docs) == 0 && len(probs) == 0:
			got = kindNone
		case len(docs) == 1 && docs[0].Run.Node == nodeName(i) && docs[0].Run.Failed():
			got = kindFail
		case len(docs) == 1 && docs[0].Run.Node == nodeName(i):
			got = kindPass
		}
		if got != kindOf(i) {
			t.Errorf("node %d: reads as %q (docs %+v, problems %+v), want %q", i, got, docs, probs, kindOf(i))
		}
	}
}

// uncri is what kubectl logs shows of a CRI log file: the content, partial
// lines joined.
func uncri(raw []byte) []byte {
	var out bytes.Buffer
	for _, line := range strings.SplitAfter(string(raw), "\n") {
		parts := strings.SplitN(line, " ", 4)
		if len(parts) < 4 {
			continue
		}
		content := parts[3]
		if parts[2] == "P" {
			content = strings.TrimSuffix(content, "\n")
		}
		out.WriteString(content)
	}
	return out.Bytes()
}

// A failing report whose log a runtime garbled beyond reading (a line not
// crisp's inside the JSON; crisp's own stderr verdict there, as CRI-O's
// conmon put it in a real recording, report.Decode reads through) is left
// out and named: the nodes of the fail kind get only the report that reads
// as failing.
func TestGarbledRecordingLeftOut(t *testing.T) {
	dir := t.TempDir()
	for _, sub := range []string{"pass", "fail", "logs"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	failing := strings.Replace(strings.Replace(recordedSmoke, `"outcome": "pass"`, `"outcome": "fail"`, 1), `"failed": 0`, `"failed": 1`, 1)
	at := strings.Index(failing, `"name": "exit-code"`)
	garbled := failing[:at+8] + "a line of another program's\n" + failing[at+8:]
	files := map[string]string{
		"pass/crisp-node.smoke.log":      recordedSmoke,
		"fail/crisp-node-crio.smoke.log": garbled, // sorts first: used for node 4 before
		"fail/crisp-node.smoke.log":      failing,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var cfg, notes bytes.Buffer
	if err := config([]string{"-pass", filepath.Join(dir, "pass"), "-fail", filepath.Join(dir, "fail"), "-logs", filepath.Join(dir, "logs"), "-run-id", "x", "-namespace", "ns", "5"}, &cfg, &notes); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(notes.String(), "left out "+filepath.Join(dir, "fail", "crisp-node-crio.smoke.log")+": ") {
		t.Errorf("the garbled recording is not named: %q", notes.String())
	}
	for _, i := range []int{3, 4} {
		raw, err := os.ReadFile(filepath.Join(dir, "logs", fmt.Sprintf("smoke-%04d.log", i)))
		if err != nil {
			t.Fatal(err)
		}
		docs, probs, err := report.Decode("x", bytes.NewReader(uncri(raw)))
		if err != nil || len(probs) > 0 || len(docs) != 1 || !docs[0].Run.Failed() {
			t.Errorf("node %d: want one failing report, got docs %+v, problems %+v, err %v", i, docs, probs, err)
		}
	}
	// With only the garbled one, there is no failing report to give.
	if err := os.Remove(filepath.Join(dir, "fail", "crisp-node.smoke.log")); err != nil {
		t.Fatal(err)
	}
	err := config([]string{"-pass", filepath.Join(dir, "pass"), "-fail", filepath.Join(dir, "fail"), "-logs", filepath.Join(dir, "logs"), "5"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "1 passing and 0 failing recorded smoke logs") {
		t.Errorf("only a garbled failing recording: err %v, want 1 passing and 0 failing", err)
	}
	// A run meant to pass that failed on a real node is a failing recording.
	if err := os.WriteFile(filepath.Join(dir, "pass", "crisp-node-crio.smoke.log"), []byte(failing), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := config([]string{"-pass", filepath.Join(dir, "pass"), "-fail", filepath.Join(dir, "fail"), "-logs", filepath.Join(dir, "logs"), "5"}, io.Discard, io.Discard); err != nil {
		t.Errorf("a failing recording among the passing ones: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "logs", "smoke-0003.log"))
	if err != nil {
		t.Fatal(err)
	}
	if docs, _, _ := report.Decode("x", bytes.NewReader(uncri(raw))); len(docs) != 1 || !docs[0].Run.Failed() {
		t.Errorf("node 3 is not given the failing report recorded among the passing ones: %+v", docs)
	}
}

// Usage errors exit 2, failures 1 (the script reads the status).
func TestRunExitStatus(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, 2},
		{[]string{"frob"}, 2},
		{[]string{"nodes", "0"}, 1},
		{[]string{"nodes", "2"}, 0},
		{[]string{"check", "1"}, 1}, // no JSON on stdin
	} {
		var out, errOut bytes.Buffer
		if got := run(tc.args, strings.NewReader(""), &out, &errOut); got != tc.want {
			t.Errorf("run %q = %d, want %d (stderr %q)", tc.args, got, tc.want, errOut.String())
		}
	}
}

// crisp's stages are YAML kwok can read; every node stage writes the
// node's addresses and kubelet port outright (kwok's own, which render
// them from the node's status, lost them at 1000 nodes), and the pods
// complete after the delay asked for.
func TestStages(t *testing.T) {
	dir := t.TempDir()
	for _, sub := range []string{"pass", "fail", "logs"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	failing := strings.Replace(recordedSmoke, `"outcome": "pass"`, `"outcome": "fail"`, 1)
	for name, body := range map[string]string{"pass/a.smoke.log": recordedSmoke, "fail/a.smoke.log": failing} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var cfg bytes.Buffer
	if err := config([]string{"-pass", filepath.Join(dir, "pass"), "-fail", filepath.Join(dir, "fail"), "-logs", filepath.Join(dir, "logs"), "-delay", "3s", "-jitter", "4s", "1"}, &cfg, io.Discard); err != nil {
		t.Fatal(err)
	}
	type stage struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			ResourceRef struct {
				Kind string `json:"kind"`
			} `json:"resourceRef"`
			Delay struct {
				Duration int `json:"durationMilliseconds"`
				Jitter   int `json:"jitterDurationMilliseconds"`
			} `json:"delay"`
			Next struct {
				StatusTemplate string `json:"statusTemplate"`
			} `json:"next"`
		} `json:"spec"`
	}
	nodeStages, podStages := 0, 0
	for _, doc := range strings.Split(cfg.String(), "\n---\n") {
		var st stage
		if err := yaml.Unmarshal([]byte(doc), &st); err != nil {
			t.Fatalf("not YAML: %v\n%s", err, doc)
		}
		if st.Kind != "Stage" {
			continue
		}
		switch st.Spec.ResourceRef.Kind {
		case "Node":
			nodeStages++
			for _, want := range []string{"- address: {{ NodeIP | Quote }}\n  type: InternalIP", "- address: {{ NodeName | Quote }}\n  type: Hostname", "Port: {{ NodePort }}"} {
				if !strings.Contains(st.Spec.Next.StatusTemplate, want) {
					t.Errorf("stage %s does not write %q:\n%s", st.Metadata.Name, want, st.Spec.Next.StatusTemplate)
				}
			}
		case "Pod":
			podStages++
			if st.Spec.Delay.Duration != 3000 || st.Spec.Delay.Jitter != 4000 {
				t.Errorf("stage %s: delay %+v, want 3000 and 4000 ms", st.Metadata.Name, st.Spec.Delay)
			}
		}
	}
	if nodeStages != 2 || podStages != 1 {
		t.Errorf("%d node and %d pod stages, want 2 and 1:\n%s", nodeStages, podStages, cfg.String())
	}
}
