package debug

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// entry is what the host way opens from the node before it enters the
// target: the target's namespaces and root, its credentials, and the tool
// to run there. Everything is opened by descriptor while the target's
// pidfd proves it is still the same process.
type entry struct {
	pid   int
	creds targetCreds
	label string // the target's LSM label; "" when it has none or crisp's own
	ns    []nsFile
	root  *os.File
	tool  *os.File // a sealed in-memory copy of the node's static busybox
}

// nsFile is one of the target's namespaces.
type nsFile struct {
	name string
	flag int
	f    *os.File
}

// The namespaces entered, in nsenter's order (the mount namespace last:
// it changes the root the others' paths would resolve in).
var entered = []struct {
	name string
	flag int
}{
	{"cgroup", unix.CLONE_NEWCGROUP}, {"ipc", unix.CLONE_NEWIPC}, {"uts", unix.CLONE_NEWUTS},
	{"net", unix.CLONE_NEWNET}, {"pid", unix.CLONE_NEWPID}, {"mnt", unix.CLONE_NEWNS},
}

// openEntry opens what entering target process pid takes, with tool (a
// statically linked busybox on the node) as the program to run there.
func openEntry(pid int, tool string) (e *entry, err error) {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, fmt.Errorf("host way: opening the target's process %d: %w", pid, err)
	}
	defer func() { _ = unix.Close(pidfd) }() // only a witness
	e = &entry{pid: pid}
	defer func() {
		if err != nil {
			e.close()
		}
	}()
	if e.creds, err = readCreds(pid); err != nil {
		return e, fmt.Errorf("host way: reading the target's credentials: %w", err)
	}
	if e.creds.seccomp == 1 {
		return e, errors.New("host way: the target runs under strict seccomp; nothing can run beside it with no more than it holds (use --way container)")
	}
	if e.creds.seccomp == 2 {
		return e, errors.New("host way: the target runs under a seccomp filter, which crisp cannot give the debug process (use --way container: the debug container gets the runtime's default profile)")
	}
	// A process in a user namespace of its own cannot be matched from the
	// node: a multi-threaded process cannot join one.
	mine, err1 := os.Readlink("/proc/self/ns/user")
	theirs, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/user", pid))
	if err := errors.Join(err1, err2); err != nil {
		return e, fmt.Errorf("host way: reading user namespaces: %w", err)
	}
	if mine != theirs {
		return e, errors.New("host way: the target runs in a user namespace of its own, which crisp cannot join from the node (use --way container)")
	}
	if e.label, err = targetLabel(pid); err != nil {
		return e, err
	}
	for _, n := range entered {
		f, err := os.Open(fmt.Sprintf("/proc/%d/ns/%s", pid, n.name))
		if err != nil {
			return e, fmt.Errorf("host way: the target's %s namespace: %w", n.name, err)
		}
		e.ns = append(e.ns, nsFile{name: n.name, flag: n.flag, f: f})
	}
	if e.root, err = os.OpenFile(fmt.Sprintf("/proc/%d/root", pid), os.O_RDONLY|unix.O_DIRECTORY, 0); err != nil {
		return e, fmt.Errorf("host way: the target's root: %w", err)
	}
	if e.tool, err = sealedCopy(tool); err != nil {
		return e, err
	}
	// The pid still names the process the descriptors were opened from.
	if err := unix.PidfdSendSignal(pidfd, 0, nil, 0); err != nil {
		return e, fmt.Errorf("host way: the target's process %d ended: %w", pid, err)
	}
	return e, nil
}

func (e *entry) close() {
	for _, n := range e.ns {
		_ = n.f.Close() // read-only descriptors
	}
	for _, f := range []*os.File{e.root, e.tool} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// toolFD is the tool's descriptor in the debug process (ExtraFiles[0]).
const toolFD = 3

// sealedCopy copies the static program at path into a sealed memfd: the
// debug process runs it without holding any file of the node (a node file
// it held would be open to whoever can reach /proc/PID/fd of it).
func sealedCopy(path string) (*os.File, error) {
	src, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("host way: %w", err)
	}
	defer func() { _ = src.Close() }() // read-only
	if err := requireStatic(src); err != nil {
		return nil, fmt.Errorf("host way: %s: %w", path, err)
	}
	const flags = unix.MFD_CLOEXEC | unix.MFD_ALLOW_SEALING
	fd, err := unix.MemfdCreate("crisp-debug-tool", flags|unix.MFD_EXEC)
	if errors.Is(err, unix.EINVAL) { // before Linux 6.3 every memfd is executable
		fd, err = unix.MemfdCreate("crisp-debug-tool", flags)
	}
	if err != nil {
		return nil, fmt.Errorf("host way: an in-memory copy of %s: %w", path, err)
	}
	mem := os.NewFile(uintptr(fd), "memfd:crisp-debug-tool")
	_, err = src.Seek(0, io.SeekStart)
	if err == nil {
		_, err = io.Copy(mem, src)
	}
	if err == nil {
		_, err = unix.FcntlInt(mem.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE|unix.F_SEAL_SEAL)
	}
	if err != nil {
		_ = mem.Close()
		return nil, fmt.Errorf("host way: an in-memory copy of %s: %w", path, err)
	}
	return mem, nil
}

// requireStatic refuses a program that needs a dynamic loader: in the
// target's root the node's libraries are not there.
func requireStatic(f *os.File) error {
	ef, err := elf.NewFile(f)
	if err != nil {
		return fmt.Errorf("not an ELF program: %w", err)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("is dynamically linked; the host way needs a statically linked busybox (Debian and Ubuntu: apt-get install busybox-static)")
		}
	}
	return nil
}

// targetLabel is the target's LSM label when it differs from crisp's own
// and is not unconfined: the label the debug process must take.
func targetLabel(pid int) (string, error) {
	read := func(p string) string {
		b, _ := os.ReadFile(p) // no LSM: no label
		return strings.TrimRight(string(b), "\x00\n")
	}
	theirs, mine := read(fmt.Sprintf("/proc/%d/attr/current", pid)), read("/proc/self/attr/current")
	if theirs == "" || theirs == mine || theirs == "unconfined" {
		return "", nil
	}
	return theirs, nil
}

// closeInherited marks every descriptor crisp holds beyond 0-2 close-on-exec:
// Go's own are, but those crisp inherited from whatever started it (a
// shell's, a supervisor's) are not, and would reach the debug process.
func closeInherited() error {
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return nil
	}
	fds, err := os.ReadDir("/proc/self/fd") // before Linux 5.11
	if err != nil {
		return fmt.Errorf("host way: listing crisp's descriptors: %w", err)
	}
	for _, fd := range fds {
		if n, err := strconv.Atoi(fd.Name()); err == nil && n > 2 {
			unix.CloseOnExec(n)
		}
	}
	return nil
}

// start enters the target on a thread of its own and starts cmd there,
// then holds that thread until release is closed. The thread's root,
// namespaces and capabilities are the target's, so it is never given back
// to the Go scheduler: it ends with its goroutine, still locked.
func (e *entry) start(cmd *exec.Cmd, release <-chan struct{}) error {
	if err := closeInherited(); err != nil {
		return err
	}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		err := e.enterThread()
		if err == nil {
			err = cmd.Start()
		}
		started <- err
		if err == nil {
			<-release
		}
	}()
	return <-started
}

// enterThread gives the calling (locked) thread the target's LSM label,
// namespaces and root, its bounding and inheritable capability sets (the
// child takes its uid, gid and groups as it starts), and no_new_privs.
func (e *entry) enterThread() error {
	if e.label != "" {
		if err := setExecLabel(e.label); err != nil {
			return err
		}
	}
	// The thread's root and working directory become its own before it
	// joins the mount namespace and chroots: the process's stay the node's.
	if err := unix.Unshare(unix.CLONE_FS); err != nil {
		return fmt.Errorf("host way: unshare(CLONE_FS): %w", err)
	}
	for _, n := range e.ns {
		if err := unix.Setns(int(n.f.Fd()), n.flag); err != nil {
			return fmt.Errorf("host way: joining the target's %s namespace: %w", n.name, err)
		}
	}
	if err := unix.Fchdir(int(e.root.Fd())); err != nil {
		return fmt.Errorf("host way: the target's root: %w", err)
	}
	if err := unix.Chroot("."); err != nil {
		return fmt.Errorf("host way: chroot into the target's root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("host way: chdir /: %w", err)
	}
	keep := e.keptCaps()
	for c := 0; c <= lastCap(); c++ {
		if keep&(1<<c) == 0 {
			if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
				return fmt.Errorf("host way: dropping capability %d from the bounding set: %w", c, err)
			}
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("host way: capget: %w", err)
	}
	inh := e.creds.inh & keep
	data[0].Inheritable, data[1].Inheritable = uint32(inh), uint32(inh>>32)
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("host way: setting the inheritable capabilities: %w", err)
	}
	// Always: whatever the target's, nothing the debug process runs may
	// gain privileges.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("host way: no_new_privs: %w", err)
	}
	return nil
}

// keptCaps is the bounding set the debug process gets: the target's, and
// for a root target no more than its effective set (root's exec turns the
// bounding set into the permitted and effective sets).
func (e *entry) keptCaps() uint64 {
	if e.creds.uid == 0 {
		return e.creds.bnd & e.creds.eff
	}
	return e.creds.bnd
}

// setExecLabel makes the calling thread's next exec (its child's) take
// label: AppArmor's "exec PROFILE", or an SELinux context.
func setExecLabel(label string) error {
	value := label
	if b, err := os.ReadFile("/sys/module/apparmor/parameters/enabled"); err == nil && strings.HasPrefix(string(b), "Y") {
		profile, _, _ := strings.Cut(label, " (") // "name (enforce)"
		value = "exec " + profile
	}
	const path = "/proc/thread-self/attr/exec"
	if err := os.WriteFile(path, []byte(value), 0); err != nil {
		return fmt.Errorf("host way: giving the debug process the target's security label %q: %w", label, err)
	}
	return nil
}
