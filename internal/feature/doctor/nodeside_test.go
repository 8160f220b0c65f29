package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// The node half walks to the container the API server named (its status's
// containerd://ID), on the pod's node, and one verdict covers both halves.
func TestNodeSideWalksTheContainerTheAPIServerNamed(t *testing.T) {
	f, w := newFakeAPI(t)
	pod := f.faults.podObj.DeepCopy()
	pod.Status.ContainerStatuses[0].ContainerID = "containerd://" + f.ctr
	f.set(func(ff *fakeFaults) { ff.podObj = pod })
	var asked []NodeSideRequest
	side := func(ctx context.Context, req NodeSideRequest) (*Report, error) {
		asked = append(asked, req)
		rep := newReport(ModeNode, req.Node)
		rep.Hops = newWalker(t, f.env.Endpoint, req.ContainerID).walk(ctx)
		rep.finish()
		return rep, nil
	}
	ctx := context.Background()
	top := newReport(ModeKubeconfig, "")
	top.Hops = w.walk(ctx)
	top.NodeSide = w.nodeSide(ctx, side, &Kube{})
	top.finish()
	if len(asked) != 1 || asked[0].Node != fakeNode || asked[0].ContainerID != f.ctr || !slices.Contains(asked[0].Args, "--hop-timeout") || asked[0].Timeout <= 0 {
		t.Fatalf("node side asked %+v, want node %s container %s", asked, fakeNode, f.ctr)
	}
	if !top.OK || !top.NodeSide.OK {
		t.Fatalf("healthy both ways, got %s / %s", names(top.Hops), names(top.NodeSide.Hops))
	}
	contains(t, "verdict", top.Verdict(), "healthy", "node side on "+fakeNode+": healthy")

	// The node half failing fails the whole, and says where.
	broken := func(ctx context.Context, req NodeSideRequest) (*Report, error) {
		req.ContainerID = "0123456789ab"
		return side(ctx, req)
	}
	top.NodeSide, top.OK = w.nodeSide(ctx, broken, &Kube{}), true
	top.finish()
	if top.OK {
		t.Fatal("a failed node half passed the whole")
	}
	contains(t, "verdict", top.Verdict(), "node side on "+fakeNode+": broken at hop target")
	var text bytes.Buffer
	if err := top.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	contains(t, "text", text.String(), "NODE SIDE, walked on node "+fakeNode, "FAIL at hop target")

	// A pod whose status names no container ID: the half does not run, and says why.
	pod = pod.DeepCopy()
	pod.Status.ContainerStatuses[0].ContainerID = ""
	f.set(func(ff *fakeFaults) { ff.podObj = pod })
	asked = nil
	w.walk(ctx)
	rep := w.nodeSide(ctx, side, &Kube{})
	if len(asked) != 0 || !strings.Contains(rep.Error, "did not run") {
		t.Fatalf("asked %+v, report error %q", asked, rep.Error)
	}
}

// crisp's log holds its stderr lines beside the report.
func TestDecodeReportFindsTheReportInALog(t *testing.T) {
	rep := newReport(ModeNode, "node-a")
	rep.Hops = []Hop{{Name: HopRuntime, Outcome: Pass}, {Name: HopTCP, Outcome: Fail, Error: "connection refused"}}
	rep.finish()
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	log := "crisp: doctor: broken at hop tcp\n{not json\n" + string(b) + "\ncrisp: a line after\n"
	got, err := DecodeReport([]byte(log))
	if err != nil || got.Node != "node-a" || len(got.Hops) != 2 || got.OK {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	// Without a report the error shows how the log ends (the kubelet suite
	// once met a node side that left none, and nothing said why).
	if _, err := DecodeReport([]byte("crisp: nothing here\n{\"kind\": \"smoke\"}\n")); err == nil || !strings.Contains(err.Error(), `crisp: nothing here`) {
		t.Fatalf("a log without a doctor report: %v", err)
	}
	if _, err := DecodeReport(nil); err == nil || !strings.Contains(err.Error(), "the log is empty") {
		t.Fatalf("an empty log: %v", err)
	}
}
