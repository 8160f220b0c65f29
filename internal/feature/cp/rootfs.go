package cp

import (
	"errors"
	"fmt"
	"io"
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

// display is name as the user would write it (for errors).
func (d *Dir) display(name string) string {
	if d.resolve&unix.RESOLVE_IN_ROOT != 0 {
		return path.Join("/", name)
	}
	return path.Join(d.label, name)
}

func (d *Dir) openat2(name string, flags uint64, mode uint64) (int, error) {
	return openat2(d.fd, name, flags, mode, d.resolve)
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

// Mkdir creates the directory name with mode 0700 and returns its device
// and inode, for SetDirMeta. No system call creates and opens a directory
// at once, so the look that follows mkdir requires what only a fresh one
// is: empty, crisp's, no group or other permission (setgid may come from
// the parent); anything else was swapped in meanwhile.
func (d *Dir) Mkdir(name string) ([2]uint64, error) {
	pfd, base, err := d.parent(name)
	if err != nil {
		return [2]uint64{}, err
	}
	defer func() { _ = unix.Close(pfd) }()
	if err := unix.Mkdirat(pfd, base, 0o700); err != nil {
		return [2]uint64{}, &fs.PathError{Op: "mkdir", Path: d.display(name), Err: err}
	}
	fd, err := openat2(pfd, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
	if err != nil {
		return [2]uint64{}, &fs.PathError{Op: "mkdir", Path: d.display(name), Err: err}
	}
	f := os.NewFile(uintptr(fd), d.display(name))
	defer func() { _ = f.Close() }() // read-only
	var st unix.Stat_t
	err = unix.Fstat(fd, &st)
	if err == nil {
		_, err = f.Readdirnames(1)
	}
	if !errors.Is(err, io.EOF) || st.Mode&0o5077 != 0 || int(st.Uid) != os.Geteuid() {
		return [2]uint64{}, &fs.PathError{Op: "mkdir", Path: d.display(name), Err: errors.New("not the empty directory just made (something replaced it)")}
	}
	return [2]uint64{st.Dev, st.Ino}, nil
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

// SetDirMeta sets the mode and modification time of the directory name,
// which must still be the directory the copy made (id: its device and
// inode, from Mkdir): a directory swapped in by the container since is
// refused, never changed.
func (d *Dir) SetDirMeta(name string, id [2]uint64, mode fs.FileMode, mtime time.Time) error {
	n, err := d.openNode(name)
	if err != nil {
		return err
	}
	defer n.close()
	if !n.st.Mode.IsDir() || n.st.Dev != id[0] || n.st.Ino != id[1] {
		return &fs.PathError{Op: "chmod", Path: d.display(name), Err: errors.New("no longer the directory the copy made (something replaced it meanwhile)")}
	}
	// fchmod does not take an O_PATH descriptor; its /proc/self/fd name
	// is this very inode, so nothing is resolved again.
	self := fmt.Sprintf("/proc/self/fd/%d", n.fd)
	if err := unix.Chmod(self, unixMode(mode)); err != nil {
		return &fs.PathError{Op: "chmod", Path: d.display(name), Err: err}
	}
	ts := []unix.Timespec{unix.NsecToTimespec(mtime.UnixNano()), unix.NsecToTimespec(mtime.UnixNano())}
	_ = unix.UtimesNano(self, ts) // times are kept when they can be
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
// symlink and walking by descriptors (a name swapped during the removal
// leads nowhere else); a name that is gone already is no error.
func (d *Dir) RemoveAll(name string) error {
	pfd, base, err := d.parent(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(pfd) }()
	return removeAt(pfd, base, d.display(name))
}

// removeAt removes base in the directory pfd and, for a directory, what it
// holds first.
func removeAt(pfd int, base, name string) error {
	fd, err := openat2(pfd, base, unix.O_PATH|unix.O_NOFOLLOW, 0, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	n, err := newNode(fd, name)
	if err != nil {
		return err
	}
	defer n.close()
	flags := 0
	if n.st.Mode.IsDir() {
		flags = unix.AT_REMOVEDIR
		// A directory copied read-only must be writable to be emptied.
		_ = unix.Chmod(fmt.Sprintf("/proc/self/fd/%d", n.fd), uint32(n.st.Mode.Perm()|0o700))
		names, err := n.names()
		if err != nil {
			return err
		}
		for _, c := range names {
			if err := removeAt(n.fd, c, path.Join(name, c)); err != nil {
				return err
			}
		}
	}
	if err := unix.Unlinkat(pfd, base, flags); err != nil && !errors.Is(err, unix.ENOENT) {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
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
