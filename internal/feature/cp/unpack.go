package cp

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// errUnsafeEntry marks a tar entry that would land outside the copy.
var errUnsafeEntry = errors.New("unsafe entry in the archive")

// entryPath checks a tar entry's name and returns it relative to the
// archive's top name, which it also returns: an absolute name, one with
// "..", or one under another top than the first entry's is refused.
func entryPath(name string) (top, rel string, err error) {
	clean := path.Clean(strings.TrimPrefix(name, "./"))
	if name == "" || path.IsAbs(name) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") || slices.Contains(strings.Split(name, "/"), "..") {
		return "", "", fmt.Errorf("%w: %q (absolute or climbing out with ..)", errUnsafeEntry, name)
	}
	top, rel, _ = strings.Cut(clean, "/")
	return top, rel, nil
}

// Landing says how an archive lands.
type Landing struct {
	// Count is told the bytes of file content written (nil: none).
	Count Counter
	// Warn is told what was skipped (nil: nobody).
	Warn func(string)
	// FromContainer is set for a copy out: the archive was made in the
	// container and lands here. Its setuid, setgid and sticky bits are
	// dropped and Umask is applied, unless KeepModes.
	FromContainer bool
	KeepModes     bool
	Umask         fs.FileMode
	// Limit bounds the bytes of file content written (0: no bound but the
	// destination's free space, which every file is checked against).
	Limit int64
}

// CurrentUmask is the process's umask, read from /proc/self/status
// (setting it to read it back would race other threads creating files);
// 022 when it cannot be read.
func CurrentUmask() fs.FileMode {
	b, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Umask:"); ok {
				if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					return fs.FileMode(m).Perm()
				}
			}
		}
	}
	return 0o022
}

// mode is the mode a file or directory whose archive mode is m gets.
func (l Landing) mode(m int64) fs.FileMode {
	if l.FromContainer && !l.KeepModes {
		return fs.FileMode(m).Perm() &^ l.Umask.Perm()
	}
	return fs.FileMode(m).Perm() | modeBits(m)
}

// Unpack writes the tar stream into d at stage (which must not exist): the
// archive's top entry becomes stage itself. It reports whether that entry
// was a directory. On error what was written is left for the caller to
// remove (it removes stage whatever happened); errSkippedTop says nothing
// was written.
func Unpack(tr *tar.Reader, d *Dir, stage string, l Landing) (bool, error) {
	if l.Count == nil {
		l.Count = noCount{}
	}
	if l.Warn == nil {
		l.Warn = func(string) {}
	}
	type dirMode struct {
		name  string
		id    [2]uint64
		mode  fs.FileMode
		mtime time.Time
	}
	var dirs []dirMode
	var links []pendingLink
	linkTo := map[string]string{} // a copy out's links: rel -> target
	top, isDir, seen := "", false, false
	var written int64 // file content so far, for Limit
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return false, fmt.Errorf("reading the archive: %w", err)
		}
		t, rel, err := entryPath(hdr.Name)
		if err != nil {
			return false, err
		}
		if !seen {
			top, seen = t, true
			if rel != "" {
				return false, fmt.Errorf("%w: %q comes before its directory", errUnsafeEntry, hdr.Name)
			}
			isDir = hdr.Typeflag == tar.TypeDir
		} else if t != top || rel == "" {
			return false, fmt.Errorf("%w: %q is not under %q", errUnsafeEntry, hdr.Name, top)
		}
		target := path.Join(stage, rel)
		mode := l.mode(hdr.Mode)
		switch hdr.Typeflag {
		case tar.TypeDir:
			id, err := d.Mkdir(target)
			if err != nil {
				return false, err
			}
			dirs = append(dirs, dirMode{target, id, mode, hdr.ModTime})
		case tar.TypeReg, 0: // 0: old tars' regular file
			if isSparse(hdr) {
				return false, fmt.Errorf("%w: %q is a sparse file (GNU sparse records), which the tar crisp runs never writes", errRefusedEntry, hdr.Name)
			}
			if written += hdr.Size; l.Limit > 0 && written > l.Limit {
				return false, fmt.Errorf("%w: %s of file content at %q, more than --size-limit %s allows", errTooLarge, size(written), hdr.Name, size(l.Limit))
			}
			if err := unpackFile(tr, d, target, mode, hdr.ModTime, hdr.Size, l.Count); err != nil {
				return false, err
			}
		case tar.TypeSymlink:
			if l.FromContainer {
				// Made once the whole copy's links are known (leadsOut).
				links = append(links, pendingLink{hdr.Name, rel, target, hdr.Linkname, hdr.ModTime})
				linkTo[rel] = hdr.Linkname
				break
			}
			if err := d.Symlink(hdr.Linkname, target); err != nil {
				return false, err
			}
			_ = d.Chtimes(target, hdr.ModTime)
		case tar.TypeLink:
			lt, lrel, err := entryPath(hdr.Linkname)
			if err != nil || lt != top || lrel == "" {
				return false, fmt.Errorf("%w: hard link %q to %q outside the copy", errUnsafeEntry, hdr.Name, hdr.Linkname)
			}
			if to, ok := linkTo[lrel]; ok {
				// A hard link to a symlink is that symlink again, here.
				links = append(links, pendingLink{hdr.Name, rel, target, to, hdr.ModTime})
				linkTo[rel] = to
				break
			}
			if err := d.Link(path.Join(stage, lrel), target); err != nil {
				return false, err
			}
		case tar.TypeXGlobalHeader:
		default:
			l.Warn(fmt.Sprintf("skipping %s: entries of tar type %q are not copied", hdr.Name, hdr.Typeflag))
		}
	}
	if !seen {
		return false, errors.New("the archive was empty")
	}
	for _, k := range links {
		if leadsOut(linkTo, k.rel, k.to) {
			l.Warn(fmt.Sprintf("skipping %s: a symlink to %s leads out of the copy", k.name, k.to))
			if k.rel == "" {
				return false, errSkippedTop
			}
			continue
		}
		if err := d.Symlink(k.to, k.target); err != nil {
			return false, err
		}
		_ = d.Chtimes(k.target, k.mtime)
	}
	// Directory modes last and deepest first: a read-only directory must
	// not stop its own contents from being written.
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := d.SetDirMeta(dirs[i].name, dirs[i].id, dirs[i].mode, dirs[i].mtime); err != nil {
			return false, err
		}
	}
	return isDir, nil
}

// errSkippedTop says the copy was one symlink, skipped: nothing landed.
var errSkippedTop = errors.New("the copy was one symlink leading out of it: nothing was copied")

// pendingLink is a symlink of a copy out, made once all are known.
type pendingLink struct {
	name, rel, target, to string // the entry's name, its path below the top, where it lands, its target
	mtime                 time.Time
}

// maxHops bounds how many links leadsOut follows (the kernel's own bound):
// past it, a chain or loop counts as leading out.
const maxHops = 40

// leadsOut says whether the symlink at rel (below the copy's top; "" is
// the top itself) pointing at to would, followed on the node, lead out of
// the copy: to is absolute, or climbs with ".." above the top (above the
// directory the copy lands in, for the top itself), or passes through
// another link of the copy (links) that does. Lexical checks of one link
// alone miss the last: a/up -> .. stays inside, x -> a/up/.. does not.
func leadsOut(links map[string]string, rel, to string) bool {
	if path.IsAbs(to) {
		return true
	}
	if rel == "" {
		c := path.Clean(to)
		return c == ".." || strings.HasPrefix(c, "../")
	}
	var at []string // where the walk is, below the top
	if dir := path.Dir(rel); dir != "." {
		at = strings.Split(dir, "/")
	}
	rest, hops := strings.Split(to, "/"), 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
		case "..":
			if len(at) == 0 {
				return true
			}
			at = at[:len(at)-1]
		default:
			next, ok := links[strings.Join(append(at, c), "/")]
			if !ok {
				at = append(at, c)
				continue
			}
			if hops++; hops > maxHops || path.IsAbs(next) {
				return true
			}
			rest = append(strings.Split(next, "/"), rest...)
		}
	}
	return false
}

// unpackFile writes the file target of length bytes, setting its mode and
// time through the descriptor that created it: the name is looked up
// once. A file larger than what its file system has free fails before its
// first byte: a copy never fills the disk to find out.
func unpackFile(r io.Reader, d *Dir, target string, mode fs.FileMode, mtime time.Time, length int64, count Counter) error {
	f, err := d.Create(target, 0o600)
	if err != nil {
		return err
	}
	var sfs unix.Statfs_t
	if err = unix.Fstatfs(int(f.Fd()), &sfs); err == nil {
		if free := freeBytes(&sfs); length > free {
			err = fmt.Errorf("%s of content, more than the %s free on its file system: %w", size(length), size(free), unix.ENOSPC)
		}
	}
	if err == nil {
		_, err = io.Copy(f, io.TeeReader(r, countWriter{count}))
	}
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		tv := unix.NsecToTimeval(mtime.UnixNano())
		_ = unix.Futimes(int(f.Fd()), []unix.Timeval{tv, tv}) // times are kept when they can be
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &fs.PathError{Op: "write", Path: d.display(target), Err: unwrapPath(err)}
	}
	return nil
}

// freeBytes is what an unprivileged writer may still use of a file system:
// crisp runs as root, but leaves the blocks reserved for root to the
// node's own daemons.
func freeBytes(s *unix.Statfs_t) int64 {
	unit := s.Frsize
	if unit == 0 {
		unit = s.Bsize
	}
	return int64(s.Bavail) * unit //nolint:unconvert // Bavail's type differs by architecture
}

// isSparse says whether hdr is a GNU sparse file: archive/tar would expand
// its holes into zeros, gigabytes from a few kilobytes of archive.
func isSparse(hdr *tar.Header) bool {
	if hdr.Typeflag == tar.TypeGNUSparse {
		return true
	}
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

var (
	// errRefusedEntry marks an archive entry crisp's own tar would never
	// make.
	errRefusedEntry = errors.New("refused entry in the archive")
	// errTooLarge marks a copy past --size-limit.
	errTooLarge = errors.New("the copy is too large")
)

// unwrapPath is the errno under an *fs.PathError (so one path is named).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// modeBits are the setuid, setgid and sticky bits of a tar mode.
func modeBits(m int64) fs.FileMode {
	var out fs.FileMode
	if m&0o4000 != 0 {
		out |= fs.ModeSetuid
	}
	if m&0o2000 != 0 {
		out |= fs.ModeSetgid
	}
	if m&0o1000 != 0 {
		out |= fs.ModeSticky
	}
	return out
}
