package fleet

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/feature/doctor"
	"github.com/crisp-cri/crisp/internal/feature/probe"
	"github.com/crisp-cri/crisp/internal/feature/report"
)

// doctorLog is a node's log in doctor mode: doctor's JSON as its Go types
// write it.
func doctorLog(t *testing.T, node string, hops []doctor.Hop) string {
	t.Helper()
	r := doctor.Report{Origin: probe.Origin{Schema: doctor.SchemaVersion, Kind: doctor.Kind, Node: node}, Mode: doctor.ModeNode, Hops: hops, OK: true}
	for _, h := range hops {
		r.OK = r.OK && !h.Failed()
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// fleet doctor runs crisp doctor against the pod's own target and merges
// the hops: the node whose streaming server is down fails at that hop,
// with the error and its meaning, the other passes.
func TestDoctorModeWalksEachNodeAndNamesTheHop(t *testing.T) {
	api := newFake("node-a", "node-b")
	api.script["node-a"] = finishes(0)
	api.logs["node-a"] = doctorLog(t, "node-a", []doctor.Hop{{Name: "runtime", Outcome: doctor.Pass}, {Name: "exec", Outcome: doctor.Pass}, {Name: "port-forward", Outcome: doctor.Pass}})
	api.script["node-b"] = finishes(1)
	api.logs["node-b"] = doctorLog(t, "node-b", []doctor.Hop{{Name: "runtime", Outcome: doctor.Pass},
		{Name: "tcp", Outcome: doctor.Fail, Error: "dial tcp 127.0.0.1:10010: connect: connection refused", Cause: "the runtime's streaming server is not listening"}})
	r, progress := runner(api, time.Minute)
	r.Mode = ModeDoctor
	fl, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(api.created) != 2 {
		t.Fatalf("%d pods created", len(api.created))
	}
	for _, p := range api.created {
		args := strings.Join(p.Spec.Containers[0].Args, " ")
		want := "doctor crisp-target-abc123 --pod " + p.Name + " --port 7777 -o json --node-name " + p.Spec.NodeName
		if !strings.HasPrefix(p.Name, "crisp-doctor-abc123-") || args != want {
			t.Errorf("pod %s: crisp's args %q, want %q", p.Name, args, want)
		}
	}
	if fl.OK() || len(fl.Runs) != 2 {
		t.Fatalf("want node-b failed: %+v", fl.Runs)
	}
	for _, run := range fl.Runs {
		if run.Kind != doctor.Kind {
			t.Errorf("%s: kind %q", run.Node, run.Kind)
		}
		switch run.Node {
		case "node-a":
			if run.Failed() || run.Count(report.Pass) != 3 {
				t.Errorf("node-a: %+v", run.Cells)
			}
		case "node-b":
			last := run.Cells[len(run.Cells)-1]
			if last.Check != "node/tcp" || last.Outcome != report.Fail || !strings.Contains(last.Detail, "connection refused: the runtime's streaming server is not listening") {
				t.Errorf("node-b: %+v", run.Cells)
			}
		}
	}
	for _, want := range []string{"node-a: running doctor", "node-a: ok after", "node-b: FAIL after"} {
		if !strings.Contains(progress.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, progress)
		}
	}
}

// doctor --kubeconfig --node-side: the walk goes to a container of the
// node's own, so the pod has no target, and only the user's port goes on.
func TestDoctorOfAContainerOfTheNode(t *testing.T) {
	c := Config{Mode: ModeDoctor, Namespace: DefaultNamespace, Image: DefaultImage, TargetImage: DefaultTargetImage, RunID: "abc123", Target: "0123abcd"}
	for port, want := range map[int]string{0: "doctor 0123abcd -o json --node-name node-a --hop-timeout 20s",
		8080: "doctor 0123abcd -o json --node-name node-a --port 8080 --hop-timeout 20s"} {
		c.ExtraArgs = []string{"--hop-timeout", "20s"}
		p := c.PodFor(Placement{Node: "node-a", Port: port, Socket: "/run/containerd/containerd.sock"}, "")
		if got := strings.Join(p.Spec.Containers[0].Args, " "); got != want || len(p.Spec.InitContainers) != 0 {
			t.Errorf("port %d: args %q (want %q), %d init containers", port, got, want, len(p.Spec.InitContainers))
		}
	}
	api := newFake("node-a")
	api.script["node-a"] = finishes(0)
	api.logs["node-a"] = doctorLog(t, "node-a", []doctor.Hop{{Name: "runtime", Outcome: doctor.Pass}})
	r, _ := runner(api, time.Minute)
	r.Mode, r.Target, r.Port = ModeDoctor, "0123abcd", 0
	var logs []string
	r.OnLog = func(node string, log []byte) { logs = append(logs, node+":"+string(log)) }
	r.pick = func(int) []int { t.Error("ports were picked for a container of the node's"); return []int{1} }
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(logs) != 1 || !strings.HasPrefix(logs[0], "node-a:{") {
		t.Errorf("OnLog got %q", logs)
	}
}
