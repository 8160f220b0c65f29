package client

import (
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// FuzzParseStates: --state values are case-insensitive and accepted ones
// are states CRI defines; refusals name what is wanted.
func FuzzParseStates(f *testing.F) {
	for _, s := range []string{"ready", "NotReady", "sandbox_ready", "running", "CONTAINER_EXITED", "unknown", "", "run"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pod, err := ParsePodState(s)
		if err == nil {
			if _, ok := runtimeapi.PodSandboxState_name[int32(pod)]; !ok {
				t.Fatalf("ParsePodState(%q) = %d, not a CRI state", s, pod)
			}
			if again, err := ParsePodState(strings.ToUpper(s)); err != nil || again != pod {
				t.Fatalf("ParsePodState(%q) = %v, %v; want %v whatever the case", strings.ToUpper(s), again, err, pod)
			}
		} else if !strings.Contains(err.Error(), strings.Join(PodStates, ", ")) {
			t.Fatalf("ParsePodState(%q) error %q does not list the states", s, err)
		}
		ctr, err := ParseContainerState(s)
		if err == nil {
			if _, ok := runtimeapi.ContainerState_name[int32(ctr)]; !ok {
				t.Fatalf("ParseContainerState(%q) = %d, not a CRI state", s, ctr)
			}
			if again, err := ParseContainerState(strings.ToLower(s)); err != nil || again != ctr {
				t.Fatalf("ParseContainerState(%q) = %v, %v; want %v whatever the case", strings.ToLower(s), again, err, ctr)
			}
		} else if !strings.Contains(err.Error(), strings.Join(ContainerStates, ", ")) {
			t.Fatalf("ParseContainerState(%q) error %q does not list the states", s, err)
		}
	})
}
