package containerd

// crisp debug against the real runtimes, on a distroless-like target: an
// image holding one static binary (the echo server), no shell, no tar
// (distrolessTar, shared with cp_test.go).

import (
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

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
		if r := h.crictl(t, "ps", "-a", "-q", "--label", "io.crisp.debug=1"); r.ExitCode != 0 || strings.TrimSpace(r.Stdout) != "" {
			t.Errorf("debug containers left behind: %v", r)
		}
	})
}

// Sessions ended by the command's exit, by SIGINT to crisp and by kill -9
// of crisp (followed by `crisp debug --cleanup`) leave no debug container
// on the real runtimes; CRISP_DEBUG_SESSIONS sets the rounds (each one
// session of each kind; the default keeps the suite short).
func TestCrispDebugLeavesNothing(t *testing.T) {
	rounds := 1
	if s := os.Getenv("CRISP_DEBUG_SESSIONS"); s != "" {
		var err error
		if rounds, err = strconv.Atoi(s); err != nil || rounds < 1 {
			t.Fatalf("CRISP_DEBUG_SESSIONS=%q: want a positive number", s)
		}
	}
	eachRuntime(t, func(t *testing.T, h *Harness) {
		left := func() []string {
			r := h.crictl(t, "ps", "-a", "-q", "--label", "io.crisp.debug=1")
			if r.ExitCode != 0 {
				t.Fatalf("crictl ps: %v", r)
			}
			return strings.Fields(r.Stdout)
		}
		interrupt := func(sig syscall.Signal) string {
			ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
			defer cancel()
			cmd := h.crispCmd(t, ctx, "debug", "-v", "--way", "container", "--image", h.BusyboxImage, h.Ctr, "--", "sleep", "60")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			for len(left()) == 0 {
				if ctx.Err() != nil {
					t.Fatalf("no debug container appeared within %s", commandTimeout)
				}
				time.Sleep(50 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond) // the exec under way, most times
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait() // its status is checked by the mock's test; here what is left counts
			return stderr.String()
		}
		for i := range rounds {
			if r := h.crisp(t, "debug", "--way", "container", "--image", h.BusyboxImage, h.Ctr, "--", "true"); r.ExitCode != 0 {
				t.Fatalf("round %d, a session ended by exit: %v", i, r)
			}
			if ids := left(); len(ids) != 0 {
				t.Fatalf("round %d: after a session ended by exit: %v left", i, ids)
			}
			stderr := interrupt(syscall.SIGINT)
			if ids := left(); len(ids) != 0 {
				t.Fatalf("round %d: after a session ended by SIGINT: %v left; crisp said:\n%s", i, ids, stderr)
			}
			interrupt(syscall.SIGKILL)
			if r := h.crisp(t, "debug", "--cleanup"); r.ExitCode != 0 || !strings.Contains(r.Stdout, "removed 1 debug container(s)") {
				t.Fatalf("round %d: crisp debug --cleanup after a kill -9: %v", i, r)
			}
			if ids := left(); len(ids) != 0 {
				t.Fatalf("round %d: after kill -9 and --cleanup: %v left", i, ids)
			}
		}
	})
}

// --profile gives the debug container kubectl debug's privileges: general
// CAP_SYS_PTRACE, netadmin CAP_NET_ADMIN and CAP_NET_RAW, sysadmin a
// privileged container (its outcome is logged for docs/debug.md).
func TestCrispDebugProfiles(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
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
		if r := h.crictl(t, "ps", "-a", "-q", "--label", "io.crisp.debug=1"); r.ExitCode != 0 || strings.TrimSpace(r.Stdout) != "" {
			t.Errorf("debug containers left behind: %v", r)
		}
	})
}
