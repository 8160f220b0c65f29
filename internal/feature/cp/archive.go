package cp

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A copy always travels as a tar stream whose entries sit under one top
// name (the file, or the directory and what it holds): tar over exec
// speaks it on the container's side, and the node's way and the local side
// pack and unpack it themselves, so every way shares one unpacker and its
// checks.

// Counter is told how many bytes of file content went by (the progress bar).
type Counter interface{ Add(n int64) }

type noCount struct{}

func (noCount) Add(int64) {}

// Pack writes name (a file, symlink or directory tree inside d) to tw under
// the top name top. Symlinks are stored, never followed; a file linked
// several times inside the tree is stored once and linked again; devices,
// sockets and pipes are skipped with a warning. The walk opens each entry
// once, by descriptor (walk.go): a file is read only when the inode it
// opened is a regular file.
func Pack(d *Dir, name, top string, tw *tar.Writer, count Counter, warn func(string)) error {
	n, err := d.openNode(name)
	if err != nil {
		return err
	}
	defer n.close()
	p := packer{tw: tw, count: count, warn: warn, links: map[[2]uint64]string{}}
	return p.walk(n, top)
}

type packer struct {
	tw    *tar.Writer
	count Counter
	warn  func(string)
	links map[[2]uint64]string // (dev, inode) -> the first name stored
}

func (p *packer) walk(n *node, entry string) error {
	st := n.st
	hdr := &tar.Header{Name: entry, Mode: int64(unixMode(st.Mode)), ModTime: st.MTime.Truncate(time.Second), Format: tar.FormatPAX}
	switch {
	case st.Mode.IsDir():
		hdr.Typeflag, hdr.Name = tar.TypeDir, entry+"/"
		if err := p.tw.WriteHeader(hdr); err != nil {
			return err
		}
		names, err := n.names()
		if err != nil {
			return err
		}
		slices.Sort(names) // the same tree packs the same way
		for _, base := range names {
			c, err := n.child(base)
			if err != nil {
				return err
			}
			err = p.walk(c, entry+"/"+base)
			c.close()
			if err != nil {
				return err
			}
		}
		return nil
	case st.Mode&fs.ModeSymlink != 0:
		var err error
		if hdr.Linkname, err = n.readlink(); err != nil {
			return err
		}
		hdr.Typeflag = tar.TypeSymlink
		return p.tw.WriteHeader(hdr)
	case st.Mode.IsRegular():
		key := [2]uint64{st.Dev, st.Ino}
		if first, ok := p.links[key]; ok && st.Nlink > 1 {
			hdr.Typeflag, hdr.Linkname = tar.TypeLink, first
			return p.tw.WriteHeader(hdr)
		}
		err := p.file(n, hdr)
		if err == nil && st.Nlink > 1 {
			p.links[key] = entry
		}
		return err
	default:
		p.warn(fmt.Sprintf("skipping %s: a %s is not copied", n.name, kindName(st.Mode)))
		return nil
	}
}

func (p *packer) file(n *node, hdr *tar.Header) error {
	f, err := n.open()
	if errors.Is(err, errNotContent) {
		p.warn(fmt.Sprintf("skipping %s: %v", n.name, err))
		return nil
	}
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // read-only
	size := n.st.Size
	hdr.Typeflag, hdr.Size = tar.TypeReg, size
	if err := p.tw.WriteHeader(hdr); err != nil {
		return err
	}
	k, err := io.Copy(p.tw, io.TeeReader(io.LimitReader(f, size), countWriter{p.count}))
	if err == nil && k < size {
		err = fmt.Errorf("%s shrank while it was copied (%d of %d bytes)", n.name, k, size)
	}
	return err
}

type countWriter struct{ c Counter }

func (w countWriter) Write(b []byte) (int, error) { w.c.Add(int64(len(b))); return len(b), nil }

func kindName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

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

// Unpack writes the tar stream into d at stage (which must not exist): the
// archive's top entry becomes stage itself. It reports whether that entry
// was a directory. On error what was written is left for the caller to
// remove (it removes stage whatever happened).
func Unpack(tr *tar.Reader, d *Dir, stage string, count Counter, warn func(string)) (bool, error) {
	type dirMode struct {
		name  string
		id    [2]uint64
		mode  fs.FileMode
		mtime time.Time
	}
	var dirs []dirMode
	top, isDir, seen := "", false, false
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
		mode := fs.FileMode(hdr.Mode).Perm() | modeBits(hdr.Mode)
		switch hdr.Typeflag {
		case tar.TypeDir:
			id, err := d.Mkdir(target)
			if err != nil {
				return false, err
			}
			dirs = append(dirs, dirMode{target, id, mode, hdr.ModTime})
		case tar.TypeReg, 0: // 0: old tars' regular file
			if err := unpackFile(tr, d, target, mode, hdr.ModTime, count); err != nil {
				return false, err
			}
		case tar.TypeSymlink:
			if err := d.Symlink(hdr.Linkname, target); err != nil {
				return false, err
			}
			_ = d.Chtimes(target, hdr.ModTime)
		case tar.TypeLink:
			lt, lrel, err := entryPath(hdr.Linkname)
			if err != nil || lt != top || lrel == "" {
				return false, fmt.Errorf("%w: hard link %q to %q outside the copy", errUnsafeEntry, hdr.Name, hdr.Linkname)
			}
			if err := d.Link(path.Join(stage, lrel), target); err != nil {
				return false, err
			}
		case tar.TypeXGlobalHeader:
		default:
			warn(fmt.Sprintf("skipping %s: entries of tar type %q are not copied", hdr.Name, hdr.Typeflag))
		}
	}
	if !seen {
		return false, errors.New("the archive was empty")
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

// unpackFile writes the file target, setting its mode and time through the
// descriptor that created it: the name is looked up once.
func unpackFile(r io.Reader, d *Dir, target string, mode fs.FileMode, mtime time.Time, count Counter) error {
	f, err := d.Create(target, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, io.TeeReader(r, countWriter{count}))
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
