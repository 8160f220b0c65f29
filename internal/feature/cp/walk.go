package cp

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	"golang.org/x/sys/unix"

	"github.com/crisp-cri/crisp/internal/base/input"
)

// A container controls its files and can swap any name for another file at
// any moment. So a walk never looks a name up twice: each entry is opened
// once, O_PATH and O_NOFOLLOW (which opens no device and no FIFO and
// follows nothing), by its last component relative to its parent's
// descriptor, and everything the walk does with it next (stat, list, read,
// readlink) goes through that descriptor. What the walk saw is what it
// reads; a name swapped a moment later changes nothing.

// node is one entry of a walk, open as O_PATH.
type node struct {
	fd   int
	st   Stat
	name string // as the user knows it, for messages
}

// openNode opens name (resolved by d's rules; its last component is not
// followed) as the top of a walk.
func (d *Dir) openNode(name string) (*node, error) {
	fd, err := d.openat2(name, unix.O_PATH|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.display(name), Err: err}
	}
	return newNode(fd, d.display(name))
}

func newNode(fd int, name string) (*node, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		_ = unix.Close(fd)
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	return &node{fd: fd, st: statOf(&st), name: name}, nil
}

func (n *node) close() { _ = unix.Close(n.fd) }

// child opens the entry base of the directory n: one component, beneath
// n, never a symlink followed.
func (n *node) child(base string) (*node, error) {
	name := path.Join(n.name, base)
	fd, err := openat2(n.fd, base, unix.O_PATH|unix.O_NOFOLLOW, 0, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return newNode(fd, name)
}

// names lists the directory n (through its own descriptor: "." of it).
func (n *node) names() ([]string, error) {
	if !n.st.Mode.IsDir() {
		return nil, &fs.PathError{Op: "open", Path: n.name, Err: unix.ENOTDIR}
	}
	fd, err := unix.Openat(n.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: n.name, Err: err}
	}
	f := os.NewFile(uintptr(fd), n.name)
	defer func() { _ = f.Close() }() // read-only
	return f.Readdirnames(-1)
}

// readlink is the target of the symlink n, as written.
func (n *node) readlink() (string, error) {
	buf := make([]byte, unix.PathMax)
	k, err := unix.Readlinkat(n.fd, "", buf)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: n.name, Err: err}
	}
	return string(buf[:k]), nil
}

// errNotContent marks a file that is regular in name only: the kernel's
// own file systems (proc, sys, debugfs, ...) present interfaces to the
// kernel as files, /proc/kcore among them.
var errNotContent = errors.New("a file of the kernel's own file systems (proc, sys, debugfs and the like) is not copied")

// pseudoFS are the file systems whose files are the kernel's interfaces.
var pseudoFS = map[int64]bool{
	unix.PROC_SUPER_MAGIC: true, unix.SYSFS_MAGIC: true, unix.DEBUGFS_MAGIC: true,
	unix.TRACEFS_MAGIC: true, unix.SECURITYFS_MAGIC: true, unix.BPF_FS_MAGIC: true,
	unix.EFIVARFS_MAGIC: true, unix.PSTOREFS_MAGIC: true, unix.SELINUX_MAGIC: true,
	unix.SMACK_MAGIC: true, unix.BINFMTFS_MAGIC: true, unix.XENFS_SUPER_MAGIC: true,
}

// open opens the regular file n for reading: the very inode the walk saw
// (reopened through /proc/self/fd, so no name is looked up again), or an
// error when n is anything else.
func (n *node) open() (*os.File, error) {
	if !n.st.Mode.IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: n.name, Err: fmt.Errorf("%s is not a regular file", input.FileKind(n.st.Mode))}
	}
	var sfs unix.Statfs_t
	if err := unix.Fstatfs(n.fd, &sfs); err != nil {
		return nil, &fs.PathError{Op: "statfs", Path: n.name, Err: err}
	}
	if pseudoFS[int64(sfs.Type)] { //nolint:unconvert // Type is int32 on some architectures
		return nil, errNotContent
	}
	fd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", n.fd), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: n.name, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Dev != n.st.Dev || st.Ino != n.st.Ino {
		_ = unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: n.name, Err: errors.New("the file changed under crisp (not the inode the walk saw)")}
	}
	return os.NewFile(uintptr(fd), n.name), nil
}

// maxRetries bounds the lookups openat2 asks to repeat (EAGAIN: a rename
// anywhere raced a ".." in the path): a container renaming in a loop must
// not keep crisp looking forever.
const maxRetries = 1000

func openat2(dirfd int, name string, flags, mode, resolve uint64) (int, error) {
	if name == "" {
		name = "."
	}
	for range maxRetries {
		fd, err := unix.Openat2(dirfd, name, &unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Mode: mode, Resolve: resolve})
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			continue
		}
		return fd, err
	}
	return -1, fmt.Errorf("the path kept changing while it was looked up (%d tries): %w", maxRetries, unix.EAGAIN)
}

// treeSize is the bytes of file content under name (for the bar; 0 when it
// cannot be had).
func treeSize(d *Dir, name string) int64 {
	n, err := d.openNode(name)
	if err != nil {
		return 0
	}
	defer n.close()
	return n.size()
}

func (n *node) size() int64 {
	if n.st.Mode.IsRegular() {
		return n.st.Size
	}
	if !n.st.Mode.IsDir() {
		return 0
	}
	names, _ := n.names()
	var total int64
	for _, base := range names {
		if c, err := n.child(base); err == nil {
			total += c.size()
			c.close()
		}
	}
	return total
}
