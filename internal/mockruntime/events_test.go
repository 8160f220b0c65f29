package mockruntime_test

import (
	"archive/tar"
	"os"
	"path/filepath"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
)

// TestEventsStatsCheckpoint follows one container through its life on the
// event stream, and checks pod stats and a checkpoint archive on the way.
func TestEventsStatsCheckpoint(t *testing.T) {
	env := start(t)
	ctx := ctxT(t)
	stream, err := env.CRI.GetContainerEvents(ctx, &runtimeapi.GetEventsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// The headers come once the subscription is in place.
	if _, err := stream.Header(); err != nil {
		t.Fatal(err)
	}
	podID := env.RunPod(t, "events")
	next := func() *runtimeapi.ContainerEventResponse {
		t.Helper()
		ev, err := stream.Recv()
		if err != nil {
			t.Fatalf("event stream: %v", err)
		}
		return ev
	}
	for _, want := range []runtimeapi.ContainerEventType{runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT, runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT} {
		if ev := next(); ev.ContainerId != podID || ev.ContainerEventType != want || ev.PodSandboxStatus.GetId() != podID {
			t.Fatalf("pod event = %v, want %v of %s", ev, want, podID)
		}
	}
	id := env.RunContainer(t, podID, mocktest.ContainerSpec{Command: []string{"sleep", "1000"}})
	for _, want := range []runtimeapi.ContainerEventType{runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT, runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT} {
		if ev := next(); ev.ContainerId != id || ev.ContainerEventType != want {
			t.Fatalf("container event = %v, want %v of %s", ev, want, id)
		}
	}

	ps, err := env.CRI.PodSandboxStats(ctx, &runtimeapi.PodSandboxStatsRequest{PodSandboxId: podID})
	if err != nil {
		t.Fatal(err)
	}
	lin := ps.GetStats().GetLinux()
	if lin.GetMemory().GetWorkingSetBytes().GetValue() == 0 || lin.GetProcess().GetProcessCount().GetValue() != 1 || len(lin.GetContainers()) != 1 {
		t.Errorf("pod stats = %v; want the sleep's memory, 1 process, 1 container", ps.GetStats())
	}

	archive := filepath.Join(t.TempDir(), "checkpoint.tar")
	if _, err := env.CRI.CheckpointContainer(ctx, &runtimeapi.CheckpointContainerRequest{ContainerId: id, Location: archive}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	names := map[string]bool{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names[h.Name] = true
	}
	for _, want := range []string{"README", "config.dump", "spec.dump", "status.dump"} {
		if !names[want] {
			t.Errorf("checkpoint archive lacks %s: %v", want, names)
		}
	}

	if _, err := env.CRI.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 10}); err != nil {
		t.Fatal(err)
	}
	if ev := next(); ev.ContainerId != id || ev.ContainerEventType != runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT {
		t.Fatalf("event after stop = %v", ev)
	}
	if _, err := env.CRI.RemoveContainer(ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id}); err != nil {
		t.Fatal(err)
	}
	if ev := next(); ev.ContainerId != id || ev.ContainerEventType != runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT {
		t.Fatalf("event after remove = %v", ev)
	}
}
