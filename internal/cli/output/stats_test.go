package output

import (
	"bytes"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// A pod the runtime reports no usage for (CRI-O lists entries with
// attributes only) gets no row, as crictl prints none; a pod with usage
// gets one.
func TestPodStatsTableLeavesOutPodsWithoutStats(t *testing.T) {
	attrs := func(id, name string) *runtimeapi.PodSandboxAttributes {
		return &runtimeapi.PodSandboxAttributes{Id: id, Metadata: &runtimeapi.PodSandboxMetadata{Name: name}}
	}
	cur := []*runtimeapi.PodSandboxStats{
		{Attributes: attrs("aaaa", "empty")},
		{Attributes: attrs("bbbb", "busy"), Linux: &runtimeapi.LinuxPodSandboxStats{
			Cpu:    &runtimeapi.CpuUsage{Timestamp: 2, UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: 10}},
			Memory: &runtimeapi.MemoryUsage{WorkingSetBytes: &runtimeapi.UInt64Value{Value: 4096}},
		}},
	}
	var b bytes.Buffer
	PodStatsTable(&b, cur, nil)
	out := b.String()
	if strings.Contains(out, "empty") {
		t.Errorf("a row for the pod without stats:\n%s", out)
	}
	if !strings.Contains(out, "busy") {
		t.Errorf("no row for the pod with stats:\n%s", out)
	}
}
