package mockruntime_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
)

// PID namespace TARGET is checked as containerd checks it (a target_id
// naming a running container of the same pod) and shown in the verbose
// status.
func TestPIDNamespaceTarget(t *testing.T) {
	env := mocktest.Start(t, mockruntime.Config{})
	ctx := context.Background()
	pod := env.RunPod(t, "p")
	other := env.RunPod(t, "q")
	target := env.RunContainer(t, pod, mocktest.ContainerSpec{Name: "target", Command: []string{"sleep", "3600"}})
	elsewhere := env.RunContainer(t, other, mocktest.ContainerSpec{Name: "elsewhere", Command: []string{"sleep", "3600"}})
	stopped := env.RunContainer(t, pod, mocktest.ContainerSpec{Name: "stopped", Command: []string{"sleep", "3600"}})
	if _, err := env.CRI.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: stopped}); err != nil {
		t.Fatal(err)
	}
	podStatus, err := env.CRI.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: pod})
	if err != nil {
		t.Fatal(err)
	}
	create := func(name, targetID string) (string, error) {
		resp, err := env.CRI.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
			PodSandboxId:  pod,
			SandboxConfig: &runtimeapi.PodSandboxConfig{Metadata: podStatus.Status.Metadata},
			Config: &runtimeapi.ContainerConfig{
				Metadata: &runtimeapi.ContainerMetadata{Name: name},
				Image:    &runtimeapi.ImageSpec{Image: mockruntime.DefaultImage},
				Command:  []string{"sleep", "3600"},
				Linux: &runtimeapi.LinuxContainerConfig{SecurityContext: &runtimeapi.LinuxContainerSecurityContext{
					NamespaceOptions: &runtimeapi.NamespaceOption{Pid: runtimeapi.NamespaceMode_TARGET, TargetId: targetID},
				}},
			},
		})
		return resp.GetContainerId(), err
	}
	for _, tc := range []struct{ name, target, want string }{
		{"none", "", "needs a target_id"},
		{"missing", "0123456789abcdef", "does not exist"},
		{"elsewhere", elsewhere, "belongs to a different sandbox"},
		{"stopped", stopped, "must be in running state"},
	} {
		if _, err := create("debug-"+tc.name, tc.target); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("TARGET %s: %v; want an error saying %q", tc.name, err, tc.want)
		}
	}
	id, err := create("debug", target)
	if err != nil {
		t.Fatal(err)
	}
	st, err := env.CRI.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id, Verbose: true})
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		NamespaceOptions struct{ Pid, TargetID string } `json:"namespaceOptions"`
	}
	if err := json.Unmarshal([]byte(st.Info["info"]), &info); err != nil || info.NamespaceOptions.Pid != "TARGET" || info.NamespaceOptions.TargetID != target {
		t.Errorf("verbose info %s: %+v, %v; want pid TARGET with the target's ID", st.Info["info"], info, err)
	}
}
