package cp

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Dir is a directory tree that every path is resolved inside, component by
// component, by the kernel (openat2): a name can never reach outside it,
// whatever symlinks or ".." it holds. Names are slash-separated and
// relative to the tree ("" or "." is the tree itself).
//
// Two modes:
//   - InRoot (a container's root seen from the node, /proc/PID/root): the
//     tree is resolved as if it were "/" (RESOLVE_IN_ROOT), so the
//     container's absolute symlinks and "../.." stay in the container, as
//     they would for a process inside it.
//   - Beneath (a local directory crisp writes into or reads from): no
//     symlink is followed at all and no name may climb out
//     (RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS): a tree from elsewhere never
//     makes crisp write through a symlink it planted or found.
type Dir struct {
	fd      int
	resolve uint64
	label   string // for errors: the directory as the user knows it
}

// OpenInRoot opens dir as a root: every later name is resolved inside it as
// a chroot would (RESOLVE_IN_ROOT).
func OpenInRoot(dir, label string) (*Dir, error) {
	return openDir(dir, label, unix.RESOLVE_IN_ROOT|unix.RESOLVE_NO_MAGICLINKS)
}

// OpenBeneath opens dir so that every later name stays beneath it and no
// symlink is followed (RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS).
func OpenBeneath(dir string) (*Dir, error) {
	return openDir(dir, dir, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
}

func openDir(dir, label string, resolve uint64) (*Dir, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: label, Err: err}
	}
	d := &Dir{fd: fd, resolve: resolve, label: label}
	// openat2 is Linux 5.6+: say so once, here, rather than fail oddly later.
	probe, err := d.openat2(".", unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		_ = unix.Close(fd)
		if errors.Is(err, unix.ENOSYS) {
			return nil, fmt.Errorf("cp needs the openat2 system call (Linux 5.6 or later) to resolve paths safely: %w", err)
		}
		return nil, &fs.PathError{Op: "open", Path: label, Err: err}
	}
	_ = unix.Close(probe)
	return d, nil
}

// Close releases the directory.
func (d *Dir) Close() error { return unix.Close(d.fd) }

// Label is the directory as the user knows it.
func (d *Dir) Label() string { return d.label }

// display is name as the user would write it (for errors).
func (d *Dir) display(name string) string {
	if d.resolve&unix.RESOLVE_IN_ROOT != 0 {
		return path.Join("/", name)
	}
	return path.Join(d.label, name)
}

func (d *Dir) openat2(name string, flags uint64, mode uint64) (int, error) {
	if name == "" {
		name = "."
	}
	for {
		fd, err := unix.Openat2(d.fd, name, &unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Mode: mode, Resolve: d.resolve})
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			continue // a rename raced the lookup (RESOLVE_IN_ROOT's guard): look again
		}
		return fd, err
	}
}

// split is name's parent and last component; the last must be a real name
// (not "", "." or "..") for anything that creates or removes.
func split(name string) (string, string, error) {
	name = strings.TrimSuffix(name, "/")
	dir, base := path.Split(name)
	if base == "" || base == "." || base == ".." {
		return "", "", fmt.Errorf("%q names no entry in a directory", name)
	}
	return dir, base, nil
}

// parent opens name's parent directory (resolved inside d) and returns it
// with name's last component.
func (d *Dir) parent(name string) (int, string, error) {
	dir, base, err := split(name)
	if err != nil {
		return -1, "", err
	}
	fd, err := d.openat2(dir, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return -1, "", &fs.PathError{Op: "open", Path: d.display(dir), Err: err}
	}
	return fd, base, nil
}

// Lstat describes name itself (a symlink is not followed).
func (d *Dir) Lstat(name string) (Stat, error) {
	return d.stat(name, unix.O_NOFOLLOW)
}

// Stat describes name, following symlinks, inside d.
func (d *Dir) Stat(name string) (Stat, error) {
	return d.stat(name, 0)
}

func (d *Dir) stat(name string, nofollow uint64) (Stat, error) {
	fd, err := d.openat2(name, unix.O_PATH|nofollow, 0)
	if err != nil {
		return Stat{}, &fs.PathError{Op: "stat", Path: d.display(name), Err: err}
	}
	defer func() { _ = unix.Close(fd) }()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return Stat{}, &fs.PathError{Op: "stat", Path: d.display(name), Err: err}
	}
	return statOf(&st), nil
}

// Stat is what cp keeps of a file's metadata.
type Stat struct {
	Mode  fs.FileMode // type and permission bits
	Size  int64
	MTime time.Time
	Nlink uint64
	Ino   uint64
	Dev   uint64
}

func statOf(st *unix.Stat_t) Stat {
	mode := fs.FileMode(st.Mode & 0o777)
	if st.Mode&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFREG:
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	return Stat{Mode: mode, Size: st.Size, MTime: time.Unix(st.Mtim.Unix()), Nlink: uint64(st.Nlink), Ino: st.Ino, Dev: st.Dev} //nolint:unconvert // Nlink is uint32 on arm64
}

// ReadDir lists name's entries (names only, sorted by the kernel's order).
func (d *Dir) ReadDir(name string) ([]string, error) {
	fd, err := d.openat2(name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.display(name), Err: err}
	}
	f := os.NewFile(uintptr(fd), d.display(name))
	defer func() { _ = f.Close() }() // read-only
	return f.Readdirnames(-1)
}

// Open opens the regular file name for reading; a symlink is refused.
func (d *Dir) Open(name string) (*os.File, error) {
	fd, err := d.openat2(name, unix.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: d.display(name), Err: err}
	}
	return os.NewFile(uintptr(fd), d.display(name)), nil
}

// Readlink is the target of the symlink name, as written (never followed).
func (d *Dir) Readlink(name string) (string, error) {
	pfd, base, err := d.parent(name)
	if err != nil {
		return "", err
	}
	defer func() { _ = unix.Close(pfd) }()
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(pfd, base, buf)
	if err != nil {
		return "", &fs.PathError{Op: "readlink", Path: d.display(name), Err: err}
	}
	return string(buf[:n]), nil
}

// Mkdir creates the directory name.
func (d *Dir) Mkdir(name string, perm fs.FileMode) error {
	pfd, base, err := d.parent(name)
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(pfd) }()
	if err := unix.Mkdirat(pfd, base, uint32(perm.Perm())); err != nil {
		return &fs.PathError{Op: "mkdir", Path: d.display(name), Err: err}
	}
	return nil
}

// Symlink creates name as a symlink to target (which is stored as given).
func (d *Dir) Symlink(target, name string) error {
	pfd, base, err := d.parent(name)
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(pfd) }()
	if err := unix.Symlinkat(target, pfd, base); err != nil {
		return &fs.PathError{Op: "symlink", Path: d.display(name), Err: err}
	}
	return nil
}

// Link makes name a hard link to old, both inside d.
func (d *Dir) Link(old, name string) error {
	ofd, obase, err := d.parent(old)
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(ofd) }()
	nfd, nbase, err := d.parent(name)
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(nfd) }()
	if err := unix.Linkat(ofd, obase, nfd, nbase, 0); err != nil {
		return &fs.PathError{Op: "link", Path: d.display(name), Err: err}
	}
	return nil
}

// Create creates the new regular file name (it must not exist).
func (d *Dir) Create(name string, perm fs.FileMode) (*os.File, error) {
	fd, err := d.openat2(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW, uint64(perm.Perm()))
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: d.display(name), Err: err}
	}
	return os.NewFile(uintptr(fd), d.display(name)), nil
}

// Chmod sets name's permission bits (setuid, setgid, sticky included); a
// symlink has none and is left alone.
func (d *Dir) Chmod(name string, mode fs.FileMode) error {
	fd, err := d.openat2(name, unix.O_PATH|unix.O_NOFOLLOW, 0)
	if err != nil {
		return &fs.PathError{Op: "chmod", Path: d.display(name), Err: err}
	}
	defer func() { _ = unix.Close(fd) }()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return nil
	}
	// fchmod does not take an O_PATH descriptor; its /proc/self/fd name
	// is this very inode, so nothing is resolved again.
	if err := unix.Chmod(fmt.Sprintf("/proc/self/fd/%d", fd), unixMode(mode)); err != nil {
		return &fs.PathError{Op: "chmod", Path: d.display(name), Err: err}
	}
	return nil
}

// Chtimes sets name's modification time (a symlink's own).
func (d *Dir) Chtimes(name string, mtime time.Time) error {
	pfd, base, err := d.parent(name)
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(pfd) }()
	ts := []unix.Timespec{unix.NsecToTimespec(mtime.UnixNano()), unix.NsecToTimespec(mtime.UnixNano())}
	if err := unix.UtimesNanoAt(pfd, base, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "chtimes", Path: d.display(name), Err: err}
	}
	return nil
}

// Rename moves old to name inside d, replacing a file (never a directory)
// at name when replace is set; without it an existing name is an error.
func (d *Dir) Rename(old, name string, replace bool) error {
	ofd, obase, err := d.parent(old)
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(ofd) }()
	nfd, nbase, err := d.parent(name)
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(nfd) }()
	flags := uint(unix.RENAME_NOREPLACE)
	if replace {
		flags = 0
	}
	if err := unix.Renameat2(ofd, obase, nfd, nbase, flags); err != nil {
		return &fs.PathError{Op: "rename", Path: d.display(name), Err: err}
	}
	return nil
}

// RemoveAll removes name and everything under it, never following a
// symlink; a name that is gone already is no error.
func (d *Dir) RemoveAll(name string) error {
	st, err := d.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.Mode.IsDir() {
		// A directory copied read-only must be writable to be emptied.
		_ = d.Chmod(name, st.Mode.Perm()|0o700)
		names, err := d.ReadDir(name)
		if err != nil {
			return err
		}
		for _, n := range names {
			if err := d.RemoveAll(path.Join(name, n)); err != nil {
				return err
			}
		}
	}
	pfd, base, err := d.parent(name)
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(pfd) }()
	flags := 0
	if st.Mode.IsDir() {
		flags = unix.AT_REMOVEDIR
	}
	if err := unix.Unlinkat(pfd, base, flags); err != nil && !errors.Is(err, unix.ENOENT) {
		return &fs.PathError{Op: "remove", Path: d.display(name), Err: err}
	}
	return nil
}

// unixMode is mode's permission bits as chmod takes them.
func unixMode(mode fs.FileMode) uint32 {
	m := uint32(mode.Perm())
	if mode&fs.ModeSetuid != 0 {
		m |= unix.S_ISUID
	}
	if mode&fs.ModeSetgid != 0 {
		m |= unix.S_ISGID
	}
	if mode&fs.ModeSticky != 0 {
		m |= unix.S_ISVTX
	}
	return m
}
