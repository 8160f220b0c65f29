package fleet

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/crisp-cri/crisp/internal/feature/report"
)

// findRun returns node's run in fl.
func findRun(t *testing.T, fl *report.Fleet, node string) report.Run {
	t.Helper()
	for _, r := range fl.Runs {
		if r.Node == node {
			return r
		}
	}
	t.Fatalf("no run of %s in %+v", node, fl.Runs)
	return report.Run{}
}

// Without --port the run picks each node's port; a node where another process
// (a DaemonSet's echo server) holds it moves to the next and passes.
func TestPickedPortTakenMovesToAnother(t *testing.T) {
	api := newFake("node-a", "node-b")
	for _, n := range []string{"node-a", "node-b"} {
		api.script[n] = finishes(0)
		api.logs[n] = smokeJSON(n, "pass")
	}
	r, progress := runner(api, time.Minute)
	r.Port = 0
	r.pick = func(int) []int { return []int{23001, 23002, 23003} }
	api.taken["node-b"] = 23001
	fl, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := fl.Check(); err != nil {
		t.Fatalf("fleet: %v; progress:\n%s", err, progress)
	}
	if !strings.Contains(progress.String(), "node-b: port 23001 is taken on the node (the target said: nc: bind: Address already in use | "+targetLastWords+" 23001 ended") ||
		!strings.Contains(progress.String(), "trying port 23002") {
		t.Errorf("progress does not say the node moved:\n%s", progress)
	}
	var ports []string
	for _, p := range api.created {
		ports = append(ports, p.Name+" "+strings.Join(p.Spec.Containers[0].Args[4:6], " "))
	}
	want := "crisp-smoke-abc123-0 --port 23001|crisp-smoke-abc123-1 --port 23001|crisp-smoke-abc123-1-r1 --port 23002"
	if got := strings.Join(ports, "|"); !sameSet(got, want) {
		t.Errorf("pods created: %s, want %s", got, want)
	}
	if !containsStr(api.deleted, "kube-system crisp-smoke-abc123-1") || len(api.pods) != 0 {
		t.Errorf("the first pod of node-b was not deleted: %v (%d left)", api.deleted, len(api.pods))
	}
}

// --port given and taken: the node fails at once, saying so, with no
// check run against the other process's port.
func TestGivenPortTakenFailsTheNode(t *testing.T) {
	api := newFake("node-a")
	api.taken["node-a"] = 7777
	r, _ := runner(api, time.Minute)
	start := time.Now()
	fl, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	run := findRun(t, fl, "node-a")
	want := "the target could not listen on port 7777: another process of the node holds it (the target said: nc: bind: Address already in use"
	if !run.Failed() || !strings.Contains(run.Cells[0].Detail, want) || !strings.Contains(run.Cells[0].Detail, "pass --port with a port that is free on every node") {
		t.Errorf("detail %q, want %q", run.Cells[0].Detail, want)
	}
	if took := time.Since(start); took > 30*time.Second || len(api.created) != 1 {
		t.Errorf("took %v with %d pods: a taken port is no reason to wait for the timeout or try another", took, len(api.created))
	}
}

// All the picked ports taken: the node fails naming them.
func TestEveryPickedPortTaken(t *testing.T) {
	api := newFake("node-a")
	r, _ := runner(api, time.Minute)
	r.Port = 0
	r.pick = func(int) []int { return []int{23001, 23001, 23001} }
	api.taken["node-a"] = 23001
	fl, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d := findRun(t, fl, "node-a").Cells[0].Detail; !strings.Contains(d, "ports 23001, 23001, 23001 were tried") || len(api.created) != 3 {
		t.Errorf("detail %q after %d pods", d, len(api.created))
	}
}

// A failed round trip says whether the target was listening.
func TestFailedForwardSaysWhetherTheTargetListened(t *testing.T) {
	forward := `{"schemaVersion":1,"kind":"smoke","node":%q,"checks":[{"call":"port-forward","transport":"spdy","protocol":"portforward.k8s.io","name":"port-forward-round-trip","outcome":"fail","detail":"sent 64 KiB to port 7777, 0 bytes came back: EOF"}]}`
	yes := true
	for _, tc := range []struct {
		name   string
		target corev1.ContainerStatus
		want   string
	}{
		{"listening", corev1.ContainerStatus{Started: &yes, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
			"0 bytes came back: EOF; the target's echo server was listening on port 7777: running, started by its probe, never restarted"},
		{"not started", corev1.ContainerStatus{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
			"the target was running and never restarted, but the kubelet did not count it started, so whether its echo server listened on port 7777 is not known"},
		{"restarted", corev1.ContainerStatus{RestartCount: 2, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Message: "crisp-target\n"}}},
			"the target's echo server was not listening on port 7777 throughout: restarted 2 times, last ended with exit status 137 (it printed no reason), now waiting: CrashLoopBackOff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newFake("node-a")
			api.logs["node-a"] = fmt.Sprintf(forward, "node-a")
			api.script["node-a"] = func(poll int, st *corev1.PodStatus) {
				finishes(1)(poll, st)
				ts := tc.target
				ts.Name = targetName("abc123")
				st.InitContainerStatuses = []corev1.ContainerStatus{ts}
			}
			r, _ := runner(api, time.Minute)
			fl, err := r.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if d := findRun(t, fl, "node-a").Cells[0].Detail; !strings.Contains(d, tc.want) {
				t.Errorf("detail %q\nwant %q", d, tc.want)
			}
		})
	}
}

func TestPickPorts(t *testing.T) {
	for range 100 {
		ports := pickPorts(portTries)
		if len(ports) != portTries || ports[0] == ports[1] || ports[1] == ports[2] || ports[0] == ports[2] {
			t.Fatalf("ports %v: want %d distinct", ports, portTries)
		}
		for _, p := range ports {
			if p < autoPortBase || p >= autoPortBase+autoPortSpan || p >= 30000 {
				t.Fatalf("port %d outside 20000-29999", p)
			}
		}
	}
}

func containsStr(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// sameSet compares |-separated lists in any order (pods are created
// concurrently).
func sameSet(a, b string) bool {
	as, bs := strings.Split(a, "|"), strings.Split(b, "|")
	if len(as) != len(bs) {
		return false
	}
	for _, x := range as {
		if !containsStr(bs, x) {
			return false
		}
	}
	return true
}
