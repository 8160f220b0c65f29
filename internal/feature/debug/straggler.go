package debug

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/crisp-cri/crisp/internal/base/termsafe"
)

// Straggler is a process found in a debug container's cgroup after the
// runtime was asked to stop the container, and killed.
type Straggler struct {
	PID     int
	Command string // its /proc/PID/cmdline, escaped for a terminal
}

func (s Straggler) String() string { return fmt.Sprintf("PID %d (%s)", s.PID, s.Command) }

// KillStragglers kills, on this node, every process in the cgroup of
// container id, and returns them. It is crisp's answer to a stop the
// runtime cannot finish: containerd 2.x's shim, in a container that shares
// another's PID namespace (as a debug container does), kills the
// container's processes once its init dies and then waits for every exec
// to end; an exec that started while the container was being stopped (a
// crisp interrupted as the runtime started its command) escapes that kill,
// runs on with the debug container's privileges, and holds the stop until
// it ends by itself.
//
// A process is the container's when a line of /proc/PID/cgroup ends in a
// cgroup named after the full container ID the way the runtimes name them
// (ID, cri-containerd-ID.scope, crio-ID.scope): a tenant cannot create or
// name a cgroup outside its own subtree, so the most a hostile container
// can lure crisp into is killing its own processes; CRI-O's monitor
// (crio-conmon-ID.scope) is not the container's and is left. Each process
// is held by a pidfd while its cgroup is checked, so a PID reused meanwhile
// is not killed. Off the node (nothing in /proc names the container) it
// finds nothing.
func KillStragglers(id string) ([]Straggler, error) {
	if len(id) < 32 {
		// A short ID could match the cgroup of another container.
		return nil, fmt.Errorf("container ID %q is not a full ID", id)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var killed []Straggler
	var errs []error
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 1 || pid == os.Getpid() {
			continue
		}
		if !inContainerCgroup(pid, id) {
			continue
		}
		s, err := killIfStill(pid, id)
		switch {
		case err != nil:
			errs = append(errs, err)
		case s != nil:
			killed = append(killed, *s)
		}
	}
	return killed, errors.Join(errs...)
}

// killIfStill kills pid if, held by a pidfd, it is still in container id's
// cgroup; nil when it is gone or no longer there.
func killIfStill(pid int, id string) (*Straggler, error) {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening process %d: %w", pid, err)
	}
	defer func() { _ = unix.Close(pidfd) }()
	// Checked again now that the pidfd holds the process: the PID may have
	// been reused between the scan and the open.
	if !inContainerCgroup(pid, id) {
		return nil, nil
	}
	cmdline, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline")) // only for the message
	if err := unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return nil, nil
		}
		return nil, fmt.Errorf("killing process %d: %w", pid, err)
	}
	command := string(bytes.TrimRight(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}), " "))
	return &Straggler{PID: pid, Command: termsafe.Printable(command)}, nil
}

// inContainerCgroup reports whether a line of pid's cgroup file ends in a
// cgroup of container id (cgroupOf).
func inContainerCgroup(pid int, id string) bool {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cgroup"))
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(data)) {
		// hierarchy-ID:controllers:path
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) == 3 && cgroupOf(path.Base(parts[2]), id) {
			return true
		}
	}
	return false
}

// cgroupOf reports whether a cgroup's name is container id's: the ID
// itself (cgroupfs), or a prefix ending in "-" and the ID, with ".scope"
// or not (systemd); never CRI-O's monitor.
func cgroupOf(name, id string) bool {
	name = strings.TrimSuffix(name, ".scope")
	prefix, ok := strings.CutSuffix(name, id)
	if !ok {
		return false
	}
	return prefix == "" || (strings.HasSuffix(prefix, "-") && !strings.Contains(prefix, "conmon"))
}
