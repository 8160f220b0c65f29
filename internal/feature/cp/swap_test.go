package cp

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// swapCopies is how many copies race the swapper: enough for the old
// Lstat-then-open-by-name walk to lose many times over, in seconds.
const swapCopies = 400

// A hostile container swaps r/x/f between hard links of a regular file, a
// FIFO, a symlink and (as root) a character device, with rename(2), while
// the node copies r/x out through the container's root again and again.
// Every copy must end, without error, holding nothing but the regular
// file's bytes at x/f (or no x/f, skipped with a warning naming it); no copy
// may ever open the FIFO (which would block it) or read the device.
func TestCopyOutNeverReadsWhatTheContainerSwapsIn(t *testing.T) {
	root := t.TempDir()
	x := filepath.Join(root, "r", "x")
	alt := filepath.Join(root, "r", "alt")
	must(t, os.MkdirAll(x, 0o755))
	must(t, os.MkdirAll(alt, 0o755))
	want := bytes.Repeat([]byte("the regular file's own bytes\n"), 100)
	must(t, os.WriteFile(filepath.Join(alt, "reg"), want, 0o644))
	must(t, unix.Mkfifo(filepath.Join(alt, "fifo"), 0o644))
	must(t, os.Symlink("reg", filepath.Join(alt, "sym")))
	kinds := []string{"reg", "fifo", "reg", "sym"}
	if os.Geteuid() == 0 {
		// /dev/null's numbers: harmless, and a read of it is not the file.
		must(t, unix.Mknod(filepath.Join(alt, "dev"), unix.S_IFCHR|0o644, int(unix.Mkdev(1, 3))))
		kinds = append(kinds, "reg", "dev")
	} else {
		t.Log("not root: no device is swapped in (mknod needs root)")
	}
	must(t, os.Link(filepath.Join(alt, "reg"), filepath.Join(x, "f")))

	// The swapper: link the next kind to a spare name, rename it over
	// x/f (atomic, so x/f always exists), and see whether anyone holds
	// the FIFO open for reading (a non-blocking open for writing succeeds
	// only then): a copy blocked in open(2) on it would be such a reader,
	// and the writer's open releases it.
	stop := make(chan struct{})
	var blocked atomic.Int32
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		spare := filepath.Join(alt, "spare")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_ = os.Remove(spare)
			if err := os.Link(filepath.Join(alt, kinds[i%len(kinds)]), spare); err != nil {
				t.Error(err)
				return
			}
			if err := os.Rename(spare, filepath.Join(x, "f")); err != nil {
				t.Error(err)
				return
			}
			if fd, err := unix.Open(filepath.Join(alt, "fifo"), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
				blocked.Add(1)
				_ = unix.Close(fd)
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()

	d, err := OpenInRoot(root, "container ctr")
	must(t, err)
	defer func() { _ = d.Close() }()
	outs := t.TempDir()
	ld, err := OpenBeneath(outs)
	must(t, err)
	defer func() { _ = ld.Close() }()
	counts := map[string]int{}
	for i := range swapCopies {
		var stderr testkit.LockedBuffer
		j := testJob(&stderr)
		err := j.unpackInto(context.Background(), ld, "", "x", noCount{}, func(w io.Writer) error {
			return packTo(d, "r/x", "x", w, j.warn)
		})
		if err != nil {
			t.Fatalf("copy %d: %v", i, err)
		}
		got, err := os.ReadFile(filepath.Join(outs, "x", "f"))
		st, lerr := os.Lstat(filepath.Join(outs, "x", "f"))
		switch {
		case errors.Is(lerr, os.ErrNotExist):
			if !strings.Contains(stderr.String(), "skipping /r/x/f: a") {
				t.Fatalf("copy %d: x/f left out without a warning naming it (stderr %q)", i, stderr.String())
			}
			counts["skipped"]++
		case lerr == nil && st.Mode()&os.ModeSymlink != 0:
			counts["symlink"]++
		case lerr == nil && st.Mode().IsRegular():
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("copy %d: x/f holds %d bytes (%.40q), not the regular file's %d", i, len(got), got, len(want))
			}
			counts["regular"]++
		default:
			t.Fatalf("copy %d: x/f is %v (%v)", i, st.Mode(), lerr)
		}
		if n := blocked.Load(); n > 0 {
			t.Fatalf("after copy %d: a copy held the FIFO open for reading (%d times): it would have blocked", i, n)
		}
		must(t, ld.RemoveAll("x"))
	}
	t.Logf("%d copies: %v", swapCopies, counts)
}

// packTo is the root way's producer: r packed as top, as a tar stream.
func packTo(d *Dir, name, top string, w io.Writer, warn func(string)) error {
	tw := tar.NewWriter(w)
	if err := Pack(d, name, top, tw, noCount{}, warn); err != nil {
		return err
	}
	return tw.Close()
}

// A copy into the container's root while the container exchanges what
// crisp just created (renameat2 RENAME_EXCHANGE) with its own files: crisp
// sets modes and times through the descriptors it created, or checks the
// inode it made, so it never changes the mode of a file or directory the
// container swapped in (a root-owned 0600 file made 0644, a 0700
// directory holding a key made 0755).
func TestCopyInNeverChmodsWhatTheContainerSwapsIn(t *testing.T) {
	root := t.TempDir()
	must(t, os.Mkdir(filepath.Join(root, "dst"), 0o755))
	src := filepath.Join(t.TempDir(), "t")
	must(t, os.MkdirAll(filepath.Join(src, "sub", "d"), 0o755))
	must(t, os.WriteFile(filepath.Join(src, "sub", "f"), []byte("copied in\n"), 0o644))

	var victim atomic.Int32 // the round whose victims the swapper uses
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		dst := filepath.Join(root, "dst")
		for {
			select {
			case <-stop:
				return
			default:
			}
			names, _ := os.ReadDir(dst)
			for _, n := range names {
				if !strings.HasPrefix(n.Name(), ".crisp-cp-") {
					continue
				}
				i := strconv.Itoa(int(victim.Load()))
				stage := filepath.Join(dst, n.Name())
				_ = unix.Renameat2(unix.AT_FDCWD, filepath.Join(root, "vfile"+i), unix.AT_FDCWD, filepath.Join(stage, "sub", "f"), unix.RENAME_EXCHANGE)
				_ = unix.Renameat2(unix.AT_FDCWD, filepath.Join(root, "vdir"+i), unix.AT_FDCWD, filepath.Join(stage, "sub", "d"), unix.RENAME_EXCHANGE)
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()

	d, err := OpenInRoot(root, "container ctr")
	must(t, err)
	defer func() { _ = d.Close() }()
	ls, err := OpenBeneath(filepath.Dir(src))
	must(t, err)
	defer func() { _ = ls.Close() }()
	var held []int
	defer func() {
		for _, fd := range held {
			_ = unix.Close(fd)
		}
	}()
	failed := 0
	const copies = swapCopies / 4 // each copy is a tree; the swaps land on most
	for i := range copies {
		// This round's victims, held by descriptor wherever they go.
		vf, vd := filepath.Join(root, "vfile"+strconv.Itoa(i)), filepath.Join(root, "vdir"+strconv.Itoa(i))
		must(t, os.WriteFile(vf, []byte("the container's secret\n"), 0o600))
		must(t, os.Mkdir(vd, 0o700))
		must(t, os.WriteFile(filepath.Join(vd, "key"), []byte("the container's key\n"), 0o600))
		for _, p := range []string{vf, vd} {
			fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
			must(t, err)
			held = append(held, fd)
		}
		victim.Store(int32(i))
		err := testJob(io.Discard).unpackInto(context.Background(), d, "dst", "t", noCount{}, func(w io.Writer) error {
			return packTo(ls, "t", "t", w, func(string) {})
		})
		if err != nil {
			failed++ // the container may make a copy fail: never succeed through its files
		}
		must(t, d.RemoveAll("dst/t"))
	}
	for _, fd := range held {
		var st unix.Stat_t
		must(t, unix.Fstat(fd, &st))
		if want := map[bool]uint32{true: 0o700, false: 0o600}[st.Mode&unix.S_IFMT == unix.S_IFDIR]; st.Mode&0o7777 != want {
			t.Fatalf("a file the container swapped in was changed from %#o to %#o", want, st.Mode&0o7777)
		}
	}
	t.Logf("%d copies, %d failed because of the swaps", copies, failed)
}
