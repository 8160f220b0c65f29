package containerd

// crisp debug against the real runtimes, on a distroless-like target: an
// image holding one static binary (the echo server), no shell, no tar
// (distrolessTar, shared with cp_test.go).

import (
	"bufio"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// debugContainers lists the IDs of the debug containers on the runtime.
func (h *Harness) debugContainers(t testing.TB) []string {
	t.Helper()
	r := h.crictl(t, "ps", "-a", "-q", "--label", "io.crisp.debug=1")
	if r.ExitCode != 0 {
		t.Fatalf("crictl ps: %v", r)
	}
	return strings.Fields(r.Stdout)
}

// debugContainersSince lists the debug containers not in before: what a
// test left, not what an earlier test left (which that test reports).
func (h *Harness) debugContainersSince(t testing.TB, before []string) []string {
	t.Helper()
	return slices.DeleteFunc(h.debugContainers(t), func(id string) bool { return slices.Contains(before, id) })
}

// distrolessPort is the port the target listens on, inside its pod (the
// target is cp_test.go's distroless image: the echo server alone).
const distrolessPort = "18089"

// debugArgs is `debug --way WAY` with args; the container way runs the
// harness's busybox (crisp's default image is not on these offline nodes).
func (h *Harness) debugArgs(way string, args ...string) []string {
	out := []string{"debug", "--way", way}
	if way == "container" {
		out = append(out, "--image", h.BusyboxImage)
	}
	return append(out, args...)
}

// On a target with no shell and no tools, both ways list its process with
// ps, see its listening port and its root filesystem; the container way
// leaves no debug container behind.
func TestCrispDebugDistroless(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		before := h.debugContainers(t)
		h.loadImage(t, distrolessTar(t), distrolessRef)
		target := h.newContainer(t, ContainerSpec{Name: "distroless", Image: distrolessRef, Command: []string{"/crisp", distrolessPort}})
		// No shell: 127 on every runtime (CRI-O's 255 from runc mapped).
		if r := h.crisp(t, "exec", target, "--", "sh", "-c", "true"); r.ExitCode != 127 {
			t.Fatalf("the target has a shell? crisp exec sh: want 127 (not found): %v", r)
		}
		for _, way := range []string{"container", "host"} {
			t.Run(way, func(t *testing.T) {
				r := h.crisp(t, h.debugArgs(way, "-v", target, "--", "ps", "-o", "pid,args")...)
				if r.ExitCode != 0 || !strings.Contains(r.Stdout, "/crisp "+distrolessPort) || !strings.Contains(r.Stderr, "way: "+way) {
					t.Fatalf("crisp debug --way %s -- ps: %v", way, r)
				}
				t.Logf("ps through the %s way:\n%s", way, r.Stdout)
				// The target's root is /proc/PID/root, PID its PID in the
				// namespace (not 1 here: the harness's pod shares one PID
				// namespace, whose PID 1 is pause).
				r = h.crisp(t, h.debugArgs(way, target, "--", "sh", "-c", "ls /proc/$CRISP_TARGET_PID/root/")...)
				if r.ExitCode != 0 || !strings.Contains(r.Stdout, "crisp") {
					t.Errorf("crisp debug --way %s -- ls /proc/$CRISP_TARGET_PID/root/: %v", way, r)
				}
				// Its network: the port it listens on.
				r = h.crisp(t, h.debugArgs(way, target, "--", "netstat", "-ltn")...)
				if r.ExitCode != 0 || !strings.Contains(r.Stdout, ":"+distrolessPort) {
					t.Errorf("crisp debug --way %s -- netstat -ltn: %v", way, r)
				}
			})
		}
		if ids := h.debugContainersSince(t, before); len(ids) != 0 {
			t.Errorf("debug containers left behind: %v", ids)
		}
	})
}

// Sessions ended by the command's exit, by SIGINT to crisp (with the
// command running, and as the runtime starts it) and by kill -9 of crisp
// (followed by `crisp debug --cleanup`) leave no debug container and no
// process of one on the real runtimes; CRISP_DEBUG_SESSIONS sets the rounds
// (the default keeps the suite short). A SIGINT as the runtime starts the
// command can leave that command running past the container's stop on
// containerd 2.x (debug.KillStragglers): crisp kills it, and says so.
func TestCrispDebugLeavesNothing(t *testing.T) {
	rounds := 2
	if s := os.Getenv("CRISP_DEBUG_SESSIONS"); s != "" {
		var err error
		if rounds, err = strconv.Atoi(s); err != nil || rounds < 1 {
			t.Fatalf("CRISP_DEBUG_SESSIONS=%q: want a positive number", s)
		}
	}
	eachRuntime(t, func(t *testing.T, h *Harness) {
		before := h.debugContainers(t)
		left := func() []string { return h.debugContainersSince(t, before) }
		// The sessions' command, told from other runtimes' (their tests run
		// at the same time) by its argument.
		secs := strconv.Itoa(60000 + rand.IntN(10000))
		// interrupt starts a session of the command and sends sig once
		// crisp's stderr has a line containing when, after wait.
		interrupt := func(sig syscall.Signal, when string, wait time.Duration) string {
			ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
			defer cancel()
			cmd := h.crispCmd(t, ctx, "debug", "-v", "--way", "container", "--image", h.BusyboxImage, h.Ctr, "--", "sleep", secs)
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			said, seen := &strings.Builder{}, make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				lines := bufio.NewScanner(stderr)
				told := false
				for lines.Scan() {
					said.WriteString(lines.Text() + "\n")
					if !told && strings.Contains(lines.Text(), when) {
						close(seen)
						told = true
					}
				}
			}()
			select {
			case <-seen:
			case <-done:
				t.Fatalf("crisp ended before it said %q:\n%s", when, said)
			}
			time.Sleep(wait)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			<-done
			_ = cmd.Wait() // its status is checked by the mock's test; here what is left counts
			return said.String()
		}
		// sleeps lists the commands of debug sessions still running.
		sleeps := func() string {
			out, _ := exec.Command("pgrep", "-a", "-x", "sleep").Output()
			var found []string
			for line := range strings.Lines(string(out)) {
				if strings.HasSuffix(strings.TrimSpace(line), " "+secs) {
					found = append(found, strings.TrimSpace(line))
				}
			}
			return strings.Join(found, "; ")
		}
		stragglers := 0
		for i := range rounds {
			if r := h.crisp(t, "debug", "--way", "container", "--image", h.BusyboxImage, h.Ctr, "--", "true"); r.ExitCode != 0 {
				t.Fatalf("round %d, a session ended by exit: %v", i, r)
			}
			if ids := left(); len(ids) != 0 {
				t.Fatalf("round %d: after a session ended by exit: %v left", i, ids)
			}
			for _, tc := range []struct {
				name, when string
				wait       time.Duration
			}{
				{"with the command running", "debug container from image", 200 * time.Millisecond},
				{"as the runtime starts the command", "negotiated", time.Duration(i%8) * 2 * time.Millisecond},
			} {
				said := interrupt(syscall.SIGINT, tc.when, tc.wait)
				if ids := left(); len(ids) != 0 {
					t.Fatalf("round %d: after a session ended by SIGINT %s: %v left; crisp said:\n%s", i, tc.name, ids, said)
				}
				if ps := sleeps(); ps != "" {
					t.Fatalf("round %d: after a session ended by SIGINT %s: its command still runs (%s); crisp said:\n%s", i, tc.name, ps, said)
				}
				if strings.Contains(said, "crisp: debug: killed PID") {
					stragglers++
					t.Logf("round %d, SIGINT %s: crisp killed a process left in the debug container:\n%s", i, tc.name, said)
				}
			}
			interrupt(syscall.SIGKILL, "debug container from image", 200*time.Millisecond)
			if r := h.crisp(t, "debug", "--cleanup"); r.ExitCode != 0 || !strings.Contains(r.Stdout, "removed 1 debug container(s)") {
				t.Fatalf("round %d: crisp debug --cleanup after a kill -9: %v", i, r)
			}
			if ids := left(); len(ids) != 0 {
				t.Fatalf("round %d: after kill -9 and --cleanup: %v left", i, ids)
			}
			if ps := sleeps(); ps != "" {
				t.Fatalf("round %d: after kill -9 and --cleanup: its command still runs (%s)", i, ps)
			}
		}
		t.Logf("%d rounds: crisp killed a process left in a stopped debug container %d times", rounds, stragglers)
	})
}

// --profile gives the debug container kubectl debug's privileges: general
// CAP_SYS_PTRACE, netadmin CAP_NET_ADMIN and CAP_NET_RAW, sysadmin a
// privileged container (its outcome is logged for docs/debug.md).
func TestCrispDebugProfiles(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		before := h.debugContainers(t)
		const ptrace, netAdmin, netRaw = 19, 12, 13
		for _, tc := range []struct {
			profile string
			caps    []uint
		}{{"general", []uint{ptrace}}, {"netadmin", []uint{netAdmin, netRaw}}, {"sysadmin", nil}} {
			r := h.crisp(t, "debug", "--way", "container", "--image", h.BusyboxImage, "--profile", tc.profile, h.Ctr, "--", "grep", "CapEff", "/proc/self/status")
			t.Logf("--profile %s: %v", tc.profile, r)
			if tc.caps == nil {
				continue
			}
			if r.ExitCode != 0 {
				t.Fatalf("--profile %s: %v", tc.profile, r)
			}
			eff, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(r.Stdout), "CapEff:")), 16, 64)
			if err != nil {
				t.Fatalf("--profile %s: CapEff %q: %v", tc.profile, r.Stdout, err)
			}
			for _, c := range tc.caps {
				if eff&(1<<c) == 0 {
					t.Errorf("--profile %s: capability %d not in CapEff %x", tc.profile, c, eff)
				}
			}
		}
		if ids := h.debugContainersSince(t, before); len(ids) != 0 {
			t.Errorf("debug containers left behind: %v", ids)
		}
	})
}
