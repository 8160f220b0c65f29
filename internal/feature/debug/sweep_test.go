package debug

import (
	"context"
	"slices"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The sweep before a session removes the container of an owner that is
// gone (its lock free), and leaves those of a live owner (its lock held,
// whatever its PID), of an owner it cannot check (no lock file: another
// PID or mount namespace, another host), and a gone owner's kept one;
// --cleanup then removes the kept one too.
func TestSweepByLease(t *testing.T) {
	cri, rn, _ := fakeNode(t, DefaultImage)
	live, err := rn.Leases.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	defer live.Release(false)
	dead, err := rn.Leases.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	dead.Release(true) // as a SIGKILLed crisp leaves it
	unknown := Owner{Host: rn.Leases.Host, Token: strings.Repeat("c", tokenLen)}
	add := func(id string, o Owner, keep bool) {
		labels := map[string]string{LabelDebug: "1", LabelOwner: o.String(), LabelTarget: "t1"}
		if keep {
			labels[LabelKeep] = "1"
		}
		cri.AddContainer(&runtimeapi.Container{Id: id, PodSandboxId: "p1", State: runtimeapi.ContainerState_CONTAINER_RUNNING, Labels: labels})
	}
	add("d-live", live.Owner, false)
	add("d-dead", dead.Owner, false)
	add("d-dead-kept", dead.Owner, true)
	add("d-unknown", unknown, false)
	add("d-legacy", Owner{Host: rn.Leases.Host, Token: "1234/5678"}, false)

	if err := rn.Run(context.Background(), Request{Target: "t1", Command: []string{"true"}, Profile: ProfileGeneral, Way: WayContainer}); err != nil {
		t.Fatal(err)
	}
	removed := func() []string {
		var ids []string
		for _, c := range cri.Calls() {
			if id, ok := strings.CutPrefix(c, "RemoveContainer "); ok {
				ids = append(ids, id)
			}
		}
		return ids
	}
	got := removed()
	if !slices.Contains(got, "d-dead") {
		t.Errorf("the gone owner's container was not swept: removed %v", got)
	}
	for _, id := range []string{"d-live", "d-dead-kept", "d-unknown", "d-legacy"} {
		if slices.Contains(got, id) {
			t.Errorf("%s was swept: removed %v", id, got)
		}
	}
	n, err := rn.Cleanup(context.Background())
	if err != nil || n != 1 || !slices.Contains(removed(), "d-dead-kept") {
		t.Errorf("--cleanup: removed %d (%v), %v; want the kept one", n, removed(), err)
	}
	for _, id := range []string{"d-live", "d-unknown", "d-legacy"} {
		if slices.Contains(removed(), id) {
			t.Errorf("--cleanup removed %s", id)
		}
	}
}
