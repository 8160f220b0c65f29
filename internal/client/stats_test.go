package client

import (
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// matchingStats applies the filter again (for runtimes that ignore it) and
// sorts by ID, for container and pod stats alike.
func TestMatchingStats(t *testing.T) {
	ctr := func(id string, labels map[string]string) *runtimeapi.ContainerStats {
		return &runtimeapi.ContainerStats{Attributes: &runtimeapi.ContainerAttributes{Id: id, Labels: labels}}
	}
	got := matchingStats([]*runtimeapi.ContainerStats{
		ctr("c", map[string]string{"app": "x"}), ctr("a", map[string]string{"app": "x"}), ctr("b", nil),
	}, StatsFilter{Labels: map[string]string{"app": "x"}})
	if len(got) != 2 || got[0].GetAttributes().GetId() != "a" || got[1].GetAttributes().GetId() != "c" {
		t.Errorf("containers by label: %v", got)
	}
	pod := func(id string) *runtimeapi.PodSandboxStats {
		return &runtimeapi.PodSandboxStats{Attributes: &runtimeapi.PodSandboxAttributes{Id: id}}
	}
	pods := matchingStats([]*runtimeapi.PodSandboxStats{pod("p2"), pod("p1")}, StatsFilter{ID: "p1"})
	if len(pods) != 1 || pods[0].GetAttributes().GetId() != "p1" {
		t.Errorf("pods by ID: %v", pods)
	}
}
