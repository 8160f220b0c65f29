package debug

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// WatchFlag is the hidden flag of `crisp debug` that makes crisp the
// watcher of a host-way session (Watch): crisp starts itself with it.
const WatchFlag = "internal-watch-session"

// WatchCommand is how a crisp starts its watcher: itself, with WatchFlag
// and the session's process group.
func WatchCommand(pgid int) *exec.Cmd {
	cmd := exec.Command("/proc/self/exe", "debug", "--"+WatchFlag, strconv.Itoa(pgid)) //nolint:gosec // crisp itself
	cmd.Args[0] = "crisp"                                                              // as ps shows it
	return cmd
}

// watcherPidFD is the session's pidfd in the watcher (its ExtraFiles[0]).
const watcherPidFD = 3

// Watch is the watcher's body: it waits until its input ends (crisp closed
// it, or died) and then, if the session's process (pidfd) has not been
// reaped, kills its process group. The watcher runs on the node, in the
// node's namespaces and a session of its own: nothing in the target can see
// it or signal it, and it outlives a crisp killed with SIGKILL, which Go's
// parent-death signal cannot cover here (in the target's PID namespace the
// child's parent reads as 0, and Go's start-up check kills it).
func Watch(in io.Reader, pgid int) error {
	pidfd := os.NewFile(watcherPidFD, "pidfd")
	defer func() { _ = pidfd.Close() }() // a descriptor only read
	_, _ = io.Copy(io.Discard, in)       // until crisp ends, however it ends
	// A pidfd of an unreaped process still takes signal 0: the process
	// group's ID cannot have been reused yet.
	if err := unix.PidfdSendSignal(int(pidfd.Fd()), 0, nil, 0); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil // reaped by crisp: the session ended with it
		}
		return fmt.Errorf("debug watcher: %w", err)
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)                        // the group may be empty but for the leader
	_ = unix.PidfdSendSignal(int(pidfd.Fd()), unix.SIGKILL, nil, 0) // the leader, if it left its group
	return nil
}

// startWatcher starts the watcher of the session whose leader has pidfd;
// the returned pipe end is its life line: closing it (or crisp's death)
// ends the session.
func startWatcher(newCmd func(pgid int) *exec.Cmd, pgid int, pidfd *os.File) (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }() // the watcher holds its own copy
	cmd := newCmd(pgid)
	cmd.Stdin = r
	cmd.ExtraFiles = []*os.File{pidfd}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // no terminal's signals reach it
	if err := cmd.Start(); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("starting the session's watcher (%s): %w", cmd.Path, err)
	}
	go func() { _ = cmd.Wait() }() // it ends once w is closed
	return w, nil
}
