package mockruntime_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestReopenLogAndStats(t *testing.T) {
	env := start(t)
	ctx := ctxT(t)
	podID := env.RunPod(t, "p")
	dir := t.TempDir()
	id := env.RunContainer(t, podID, mocktest.ContainerSpec{
		Name:    "rotated",
		Command: []string{"sh", "-c", `echo one; touch "$D/m1"; while [ ! -e "$D/go" ]; do sleep 0.05; done; echo two; touch "$D/m2"; exec sleep 1000`},
		Env:     map[string]string{"D": dir},
	})
	waitFile(t, filepath.Join(dir, "m1"))
	st := waitState(t, env, id, runtimeapi.ContainerState_CONTAINER_RUNNING)
	// m1 exists once "one" is in the pipe, not yet in the log: rotate only
	// after the runtime has written it.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if data, _ := os.ReadFile(st.LogPath); strings.Contains(string(data), "stdout F one") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q never reached the log %s", "one", st.LogPath)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := os.Rename(st.LogPath, st.LogPath+".1"); err != nil {
		t.Fatal(err)
	}
	if _, err := env.CRI.ReopenContainerLog(ctx, &runtimeapi.ReopenContainerLogRequest{ContainerId: id}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	waitFile(t, filepath.Join(dir, "m2"))
	if _, err := env.CRI.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id}); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(st.LogPath + ".1")
	cur, _ := os.ReadFile(st.LogPath)
	if !strings.Contains(string(old), "stdout F one") || strings.Contains(string(old), "two") {
		t.Errorf("rotated log = %q, want only one", old)
	}
	if !strings.Contains(string(cur), "stdout F two") || strings.Contains(string(cur), "one") {
		t.Errorf("reopened log = %q, want only two", cur)
	}

	run := env.RunContainer(t, podID, mocktest.ContainerSpec{Name: "running", Command: []string{"sleep", "1000"}})
	stats, err := env.CRI.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(stats.Stats) != 1 || stats.Stats[0].Attributes.Id != run {
		t.Errorf("ListContainerStats = %v, want the running container %s only", stats.Stats, run)
	}
}
