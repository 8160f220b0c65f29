package mockruntime_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestCloseEndsEverything(t *testing.T) {
	noChildren(t)
	env, err := mocktest.StartRuntime(context.Background(), mockruntime.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	podID, err := env.CreatePod(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	mark := filepath.Join(t.TempDir(), "jobs")
	var pids []int
	for _, spec := range []mocktest.ContainerSpec{
		{Name: "plain", Command: []string{"sh", "-c", "sleep 1000 & sleep 1000"}},
		{Name: "tty", Command: []string{"sh"}, TTY: true, Stdin: true},
		{Name: "stdin", Command: []string{"cat"}, Stdin: true},
		// Job control on a terminal: each job in a process group of its
		// own, outside the container's.
		{Name: "jobs", Command: []string{"sh", "-c", `set -m; sleep 1000 & sleep 1000 & touch "$MARK"; wait`}, TTY: true, Env: map[string]string{"MARK": mark}},
	} {
		id, err := env.CreateContainer(ctx, podID, spec)
		if err != nil {
			t.Fatal(err)
		}
		st, err := env.CRI.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id, Verbose: true})
		if err != nil {
			t.Fatal(err)
		}
		var info struct{ Pid int }
		if err := json.Unmarshal([]byte(st.Info["info"]), &info); err != nil || info.Pid == 0 {
			t.Fatalf("verbose status info %q has no pid: %v", st.Info["info"], err)
		}
		pids = append(pids, info.Pid)
	}
	waitFile(t, mark)
	if len(childProcesses(t)) == 0 {
		t.Fatal("no container process is running")
	}
	sock := strings.TrimPrefix(env.Endpoint, "unix://")
	if err := env.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket %s remains after Close: %v", sock, err)
	}
	// Every container process led its process group (and, with a TTY, its
	// session): nothing of those may remain.
	// SIGKILL takes effect asynchronously: allow the orphans a moment to
	// die. Zombies that init reaps are not ours.
	for _, pid := range pids {
		deadline := time.Now().Add(10 * time.Second)
		for {
			left := groupOrSessionMembers(t, pid)
			if len(left) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("processes of container process %d remain after Close: %v", pid, left)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// groupOrSessionMembers lists live processes whose process group or session
// is id.
func groupOrSessionMembers(t *testing.T, id int) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(st), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(st)[i+1:])
		// state ppid pgrp session. A zombie is its parent's to reap: only
		// ours count (orphans go to init).
		if len(f) < 4 || (f[2] != strconv.Itoa(id) && f[3] != strconv.Itoa(id)) {
			continue
		}
		if f[0] == "Z" && f[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		out = append(out, e.Name()+" "+string(st)[:i+1]+" "+f[0])
	}
	return out
}
