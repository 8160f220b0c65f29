package debug

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/session"
)

// HostEntry runs a command in a target's namespaces from the node, as a
// process that holds no more than the target and cannot be used to reach
// the node: it joins the target's cgroup, IPC, UTS, network, PID and mount
// namespaces and chroots into the target's root (so /proc/PID/root of it is
// the target's root, not the node's), takes the target's uid, gid and
// groups, a bounding set no larger than the target's (for a root target, no
// larger than its effective set), the target's inheritable and ambient
// capabilities and LSM label, and no_new_privs. The program it runs is the
// node's statically linked busybox, copied into a sealed memfd, so that it
// holds no file of the node. It dies with crisp: crisp kills its process
// group when it ends, and a watcher on the node (watch.go) does when crisp
// is killed, SIGKILL included; the command waits at a gate until the
// watcher runs. Targets it cannot match (seccomp, a user namespace of their
// own) are refused. It needs root.
type HostEntry struct {
	// Euid is the effective user ID (os.Geteuid).
	Euid func() int
	// Tools are where the node's static busybox is looked for, in order
	// (HostTools).
	Tools []string
}

// HostTools are the places of a static busybox on common nodes (Debian's
// and Ubuntu's busybox-static, and others).
var HostTools = []string{"/bin/busybox", "/usr/bin/busybox", "/usr/local/bin/busybox"}

// NewHostEntry is the node's HostEntry.
func NewHostEntry() HostEntry { return HostEntry{Euid: os.Geteuid, Tools: HostTools} }

// hostPlan is an entry ready to run.
type hostPlan struct {
	pid   int
	nsPID int // the target's PID in its namespace; 0: unknown
	tool  string
}

// plan checks that the host way can work for target: root, a busybox, and
// the target's PID from the runtime's verbose status.
func (h HostEntry) plan(ctx context.Context, target session.Running) (*hostPlan, error) {
	if h.Euid() != 0 {
		return nil, errors.New("host way: entering another process's namespaces needs root on the node (run crisp with sudo)")
	}
	var p hostPlan
	for _, t := range h.Tools {
		if fi, err := os.Stat(t); err == nil && fi.Mode().IsRegular() {
			p.tool = t
			break
		}
	}
	if p.tool == "" {
		return nil, fmt.Errorf("host way: no busybox on the node (looked at %s; Debian and Ubuntu: apt-get install busybox-static)", strings.Join(h.Tools, ", "))
	}
	var err error
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

// hostPath is the debug command's PATH: the target's own folders (busybox
// runs its applets first, whatever PATH says).
const hostPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// hostArgs is the debug process's argv: busybox's sh (chosen by argv[0])
// exec'ing the command, so that a busybox applet and a program of the
// target's alike are found. It first waits for crisp's word on gateFD,
// sent once the session's watcher runs: a crisp killed before that leaves
// nothing running.
func hostArgs(command []string) []string {
	script := fmt.Sprintf(`read -r go <&%d || exit 125; exec %d<&-; exec "$@"`, gateFD, gateFD)
	return append([]string{"sh", "-c", script, "sh"}, command...)
}

// gateFD is the descriptor of the gate in the debug process
// (ExtraFiles[1]).
const gateFD = 4

// hostStopGrace is how long the command has after crisp is interrupted
// (SIGTERM to its process group) before it is killed, and how long its
// output may trail its exit.
const hostStopGrace = 2 * time.Second

// runHost runs the command in the target and passes its exit status
// through.
func (rn Runner) runHost(ctx context.Context, p *hostPlan, r Request) error {
	e, err := openEntry(p.pid, p.tool)
	if err != nil {
		return err
	}
	defer e.close()
	c := e.creds
	rn.Deps.Logf("debug: host way: as uid %d gid %d, capabilities %016x (bounding %016x), no_new_privs, root and namespaces of PID %d, busybox from %s",
		c.uid, c.gid, e.keptCaps(), e.keptCaps(), p.pid, p.tool)

	env := []string{"PATH=" + hostPath, "HOME=/"}
	if p.nsPID > 0 {
		env = append(env, fmt.Sprintf("%s=%d", TargetPIDEnv, p.nsPID))
	}
	gateR, gateW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("host way: %w", err)
	}
	defer func() { _ = gateW.Close() }() // closed unopened, the gate keeps the command from running
	cmd := &exec.Cmd{
		Path: fmt.Sprintf("/proc/self/fd/%d", toolFD), Args: hostArgs(r.Command), Env: env,
		ExtraFiles: []*os.File{e.tool, gateR}, WaitDelay: hostStopGrace,
		// No Pdeathsig: Go's start-up check of it kills a child whose
		// parent is outside its PID namespace; the watcher does its work.
		SysProcAttr: &syscall.SysProcAttr{
			Credential: &syscall.Credential{Uid: c.uid, Gid: c.gid, Groups: c.groups},
			Setsid:     true,
		},
	}
	if c.uid != 0 {
		cmd.SysProcAttr.AmbientCaps = capList(c.amb & e.keptCaps())
	}
	if !r.TTY {
		// Pipes, never crisp's own descriptors (a terminal it held could
		// be reached through /proc/PID/fd).
		cmd.Stdin = strings.NewReader("") // not the node's /dev/null
		if r.Stdin {
			cmd.Stdin = struct{ io.Reader }{rn.Deps.Streams.In}
		}
		cmd.Stdout, cmd.Stderr = struct{ io.Writer }{rn.Deps.Streams.Out}, struct{ io.Writer }{rn.Deps.Streams.ErrOut}
		return rn.hostOutcome(ctx, e, cmd, gateR, gateW, nil)
	}
	// With -t the command gets a terminal of its own, which crisp relays.
	ptmx, tty, err := pty.Open()
	if err != nil {
		return fmt.Errorf("host way: a terminal for the command: %w", err)
	}
	defer func() { _ = ptmx.Close() }() // ends the relay
	term := "xterm"
	if t := os.Getenv("TERM"); t != "" {
		term = t
	}
	cmd.Env = append(cmd.Env, "TERM="+term)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, 0
	t := rn.Deps.Terminal(r.Stdin)
	return t.Safe(ctx, func(ctx context.Context) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel() // ends the size queue
		if q := t.MonitorSize(ctx); q != nil {
			go func() {
				for s := q.Next(); s != nil; s = q.Next() {
					_ = pty.Setsize(ptmx, &pty.Winsize{Rows: s.Height, Cols: s.Width}) // a lost resize only looks wrong
				}
			}()
		}
		return rn.hostOutcome(ctx, e, cmd, gateR, gateW, &relay{ptmx: ptmx, tty: tty, in: rn.Deps.Streams.In, out: rn.Deps.Streams.Out, stdin: r.Stdin})
	})
}

// relay copies between crisp's streams and the command's terminal.
type relay struct {
	ptmx, tty *os.File
	in        io.Reader
	out       io.Writer
	stdin     bool
}

// hostOutcome starts cmd in the target, waits for it (ending its process
// group when crisp is interrupted), and turns its end into crisp's.
func (rn Runner) hostOutcome(ctx context.Context, e *entry, cmd *exec.Cmd, gateR, gateW *os.File, rl *relay) error {
	release := make(chan struct{})
	defer close(release)
	pidfd := -1
	cmd.SysProcAttr.PidFD = &pidfd
	err := e.start(cmd, release)
	_ = gateR.Close() // the command holds it now
	if err != nil {
		if rl != nil {
			_ = rl.tty.Close()
		}
		return fmt.Errorf("host way: %w", err)
	}
	pgid := cmd.Process.Pid
	if pidfd < 0 {
		_ = gateW.Close() // the command exits at the closed gate
		_ = cmd.Wait()
		return errors.New("host way: this kernel gives no pidfd (Linux 5.3 or later is needed to watch the session)")
	}
	pidFile := os.NewFile(uintptr(pidfd), "pidfd")
	defer func() { _ = pidFile.Close() }() // only passed on
	newWatcher := rn.Watcher
	if newWatcher == nil {
		newWatcher = WatchCommand
	}
	life, err := startWatcher(newWatcher, pgid, pidFile)
	if err != nil {
		_ = gateW.Close() // the command exits at the closed gate
		_ = cmd.Wait()
		return fmt.Errorf("host way: %w", err)
	}
	defer func() { _ = life.Close() }() // after the session's end below: the watcher finds it reaped
	if _, err := gateW.Write([]byte("go\n")); err != nil {
		return fmt.Errorf("host way: starting the command: %w", err)
	}
	_ = gateW.Close()
	copied := make(chan struct{})
	if rl != nil {
		_ = rl.tty.Close() // the command holds it now
		if rl.stdin {
			go func() { _, _ = io.Copy(rl.ptmx, rl.in) }() // ends with crisp's input or the terminal
		}
		go func() {
			defer close(copied)
			_, _ = io.Copy(rl.out, rl.ptmx) // EIO once no process holds the terminal
		}()
	} else {
		close(copied)
	}
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		// Waited for without reaping: while the command is a zombie its
		// process group's ID cannot be reused, so the kill below hits
		// only what it left running.
		var info unix.Siginfo
		for {
			if err := unix.Waitid(unix.P_PID, pgid, &info, unix.WEXITED|unix.WNOWAIT, nil); !errors.Is(err, unix.EINTR) {
				return
			}
		}
	}()
	interrupted := false
	select {
	case <-exited:
	case <-ctx.Done():
		interrupted = true
		_ = syscall.Kill(-pgid, syscall.SIGTERM) // it may be ending already
		select {
		case <-exited:
		case <-time.After(hostStopGrace):
		}
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL) // what it started dies with the session
	<-exited
	err = cmd.Wait()
	select {
	case <-copied:
	case <-time.After(hostStopGrace):
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
	if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		return fmt.Errorf("host way: %w", err)
	}
	return nil
}
