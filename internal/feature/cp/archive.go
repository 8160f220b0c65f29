package cp

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"time"

	"github.com/crisp-cri/crisp/internal/base/input"
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
		p.warn(fmt.Sprintf("skipping %s: %s is not copied", n.name, input.FileKind(st.Mode)))
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
