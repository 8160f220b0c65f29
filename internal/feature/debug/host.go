package debug

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/session"
)

// HostEntry enters a target's namespaces from the node: util-linux's
// nsenter joins the target's PID, network, IPC and UTS namespaces (not its
// mount namespace: the node's tools stay reachable), then unshare gives the
// command a private mount namespace with a /proc of the target's PID
// namespace, so ps lists the target's processes and the target's root
// filesystem is /proc/PID/root (PID 1 when the target has a PID namespace
// of its own). It needs root on the node and both tools in PATH.
type HostEntry struct {
	// LookPath finds a program (exec.LookPath).
	LookPath func(string) (string, error)
	// Euid is the effective user ID (os.Geteuid).
	Euid func() int
}

// NewHostEntry is the node's HostEntry.
func NewHostEntry() HostEntry { return HostEntry{LookPath: exec.LookPath, Euid: os.Geteuid} }

// hostPlan is an entry ready to run.
type hostPlan struct {
	pid              int
	nsPID            int // the target's PID in its namespace; 0: unknown
	nsenter, unshare string
}

// plan checks that the host way can work for target: root, the tools, and
// the target's PID from the runtime's verbose status.
func (h HostEntry) plan(ctx context.Context, target session.Running) (*hostPlan, error) {
	if h.Euid() != 0 {
		return nil, errors.New("host way: entering another process's namespaces needs root on the node (run crisp with sudo)")
	}
	var p hostPlan
	var err error
	if p.nsenter, err = h.LookPath("nsenter"); err != nil {
		return nil, errors.New("host way: no nsenter in PATH (install util-linux)")
	}
	if p.unshare, err = h.LookPath("unshare"); err != nil {
		return nil, errors.New("host way: no unshare in PATH (install util-linux)")
	}
	if p.pid, err = target.PID(ctx); err != nil {
		return nil, fmt.Errorf("host way: %w", err)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/ns/pid", p.pid)); err != nil {
		return nil, fmt.Errorf("host way: the runtime says the target's PID is %d, which this node does not have (is crisp on the runtime's node, in its PID namespace?): %w", p.pid, err)
	}
	p.nsPID, _ = namespacePID(p.pid)
	return &p, nil
}

// TargetPIDEnv names the environment variable that holds the target's PID
// as the debug command sees it (in the target's PID namespace), when crisp
// could learn it: its files are at /proc/$CRISP_TARGET_PID/root. It is PID
// 1 only when the target has a PID namespace of its own; in a pod that
// shares one, PID 1 is the pod's pause process.
const TargetPIDEnv = "CRISP_TARGET_PID"

// namespacePID is what node process pid is called in its own PID namespace
// (the last NSpid of /proc/PID/status).
func namespacePID(pid int) (int, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0, false
			}
			n, err := strconv.Atoi(f[len(f)-1])
			return n, err == nil
		}
	}
	return 0, false
}

// hostArgv is the command line that runs command in the target's
// namespaces.
func (p *hostPlan) hostArgv(command []string) []string {
	argv := []string{p.nsenter, "--target", fmt.Sprint(p.pid), "--pid", "--net", "--ipc", "--uts", "--",
		p.unshare, "--mount", "--propagation", "private", "--mount-proc", "--"}
	return append(argv, command...)
}

// hostStopGrace is how long a command without a terminal has after crisp is
// interrupted (SIGTERM to its process group) before it is killed.
const hostStopGrace = 2 * time.Second

// runHost runs the command through nsenter with crisp's streams and passes
// its exit status through.
func (rn Runner) runHost(ctx context.Context, p *hostPlan, r Request) error {
	argv := p.hostArgv(r.Command)
	rn.Deps.Logf("debug: running %q", argv)
	cmd := exec.Command(argv[0], argv[1:]...) //nolint:gosec // the user's own command, run as the user asked
	if r.Stdin {
		cmd.Stdin = rn.Deps.Streams.In
	}
	cmd.Stdout, cmd.Stderr = rn.Deps.Streams.Out, rn.Deps.Streams.ErrOut
	if p.nsPID > 0 {
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", TargetPIDEnv, p.nsPID))
	}
	// With a terminal the command shares crisp's process group, so the
	// terminal's Ctrl-C reaches it (and an interactive shell ignores it);
	// without one it gets a group of its own, which crisp ends when it is
	// interrupted. If crisp dies, nsenter is killed with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: !r.TTY, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("host way: starting %s: %w", p.nsenter, err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var err error
	interrupted := false
	select {
	case err = <-waited:
	case <-ctx.Done():
		if r.TTY {
			err = <-waited // the terminal's signal reached the command too
			break
		}
		interrupted = true
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) // it may have exited already
		select {
		case err = <-waited:
		case <-time.After(hostStopGrace):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // it may have exited already
			err = <-waited
		}
	}
	if interrupted {
		return cmdutil.NewInterrupted(context.Cause(ctx))
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code := exitErr.ExitCode()
		if code < 0 {
			code = 128 + int(exitErr.Sys().(syscall.WaitStatus).Signal())
		}
		rn.Deps.Logf("remote command exited with status %d", code)
		return cmdutil.RemoteStatus{Code: code}
	}
	if err != nil {
		return fmt.Errorf("host way: %w", err)
	}
	return nil
}
