package debug

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// Only a cgroup named after the full ID the way the runtimes name a
// container's is the container's.
func TestCgroupOf(t *testing.T) {
	id := strings.Repeat("ab", 32)
	for name, want := range map[string]bool{
		id:                                true, // containerd, cgroupfs
		"cri-containerd-" + id + ".scope": true, // containerd, systemd
		"crio-" + id + ".scope":           true, // CRI-O, systemd
		"crio-" + id:                      true, // CRI-O, cgroupfs
		"crio-conmon-" + id + ".scope":    false,
		id + "-x":                         false,
		"x" + id:                          false,
		id[2:]:                            false,
		"":                                false,
	} {
		if got := cgroupOf(name, id); got != want {
			t.Errorf("cgroupOf(%q) = %v, want %v", name, got, want)
		}
	}
	if _, err := KillStragglers(id[:12]); err == nil {
		t.Error("a short ID was taken")
	}
}

// On a real node: a process in a cgroup named after the container is
// killed and named; one in CRI-O's monitor cgroup of the same container
// and one elsewhere run on.
func TestKillStragglersKillsOnlyTheContainersProcesses(t *testing.T) {
	testkit.RequireRoot(t, "creating cgroups")
	base := "/sys/fs/cgroup/pids" // cgroup v1
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		base = "/sys/fs/cgroup" // cgroup v2
	}
	raw := make([]byte, 32)
	_, _ = rand.Read(raw)
	id := hex.EncodeToString(raw)
	parent := filepath.Join(base, "crisp-test-"+id[:8])
	if err := os.Mkdir(parent, 0o755); err != nil {
		t.Fatalf("no cgroup to test in: %v", err)
	}
	start := func(cgroup string) *exec.Cmd {
		cmd := exec.Command("sleep", "300")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		if cgroup != "" {
			dir := filepath.Join(parent, cgroup)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.Remove(dir) })
			if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return cmd
	}
	t.Cleanup(func() { _ = os.Remove(parent) }) // after the children (cleanups run last first)
	left := start("cri-containerd-" + id + ".scope")
	monitor := start("crio-conmon-" + id + ".scope")
	elsewhere := start("")

	killed, err := KillStragglers(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(killed) != 1 || killed[0].PID != left.Process.Pid || killed[0].Command != "sleep 300" {
		t.Fatalf("killed %v; want PID %d (sleep 300) only", killed, left.Process.Pid)
	}
	waited := make(chan error, 1)
	go func() { waited <- left.Wait() }()
	select {
	case err := <-waited:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Errorf("the straggler ended with %v, not SIGKILL", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the straggler still runs")
	}
	for _, cmd := range []*exec.Cmd{monitor, elsewhere} {
		if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
			t.Errorf("PID %d was killed too: %v", cmd.Process.Pid, err)
		}
	}
}

// A debug container whose stop the runtime cannot finish (a process left
// in it, as containerd 2.x's shim holds the stop while an exec that
// escaped its kill runs) is stopped once that process is killed: the
// session ends with nothing left, and crisp says what it killed. Once the
// container is removed crisp looks once more, for a runtime that reports
// it gone with such a process running; a stop refused at once is no
// straggler's doing.
func TestStopHeldByAStragglerEndsOnceItIsKilled(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stop  func(ctx context.Context) error // the debug container's stop
		looks []int                           // RemoveContainer calls made at each look
	}{
		{"stop held", func(ctx context.Context) error {
			<-ctx.Done() // as containerd waits for the container's exit
			return status.FromContextError(ctx.Err()).Err()
		}, []int{0, 1}},
		{"gone with the process running", func(context.Context) error { return nil }, []int{1}},
		{"stop refused", func(context.Context) error { return status.Error(codes.Unknown, "refused") }, []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cri, rn, stderr := fakeNode(t, DefaultImage)
			var straggling atomic.Bool
			straggling.Store(true)
			removals := func() []string {
				return slices.DeleteFunc(cri.Calls(), func(c string) bool { return !strings.HasPrefix(c, "RemoveContainer ") })
			}
			cri.Before = func(ctx context.Context, method string, req proto.Message) error {
				if method != "StopContainer" || req.(*runtimeapi.StopContainerRequest).GetContainerId() == "t1" || !straggling.Load() {
					return nil
				}
				return tc.stop(ctx)
			}
			var looks []int
			rn.Stragglers = func(id string) ([]Straggler, error) {
				looks = append(looks, len(removals()))
				if !straggling.Swap(false) {
					return nil, nil
				}
				return []Straggler{{PID: 4242, Command: "sleep 60"}}, nil
			}
			if err := rn.Run(context.Background(), Request{Target: "t1", Command: []string{"true"}, Profile: ProfileGeneral, Way: WayContainer}); err != nil {
				t.Fatalf("the session: %v; crisp said: %s", err, stderr)
			}
			if created, removed := cri.Requests("CreateContainer"), removals(); len(created) != 1 || len(removed) != 1 || !slices.Equal(looks, tc.looks) {
				t.Fatalf("created %d, removed %v, looked for stragglers with %v removals made; want %v", len(created), removed, looks, tc.looks)
			}
			if want := "crisp: debug: killed PID 4242 (sleep 60): it outlived the stop of debug container"; !strings.Contains(stderr.String(), want) {
				t.Errorf("crisp did not say what it killed (%q): %s", want, stderr)
			}
		})
	}
}
