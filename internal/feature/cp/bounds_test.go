package cp

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// rawHeader is one ustar header block, written by hand: archive/tar's
// writer will not write GNU sparse records, which is what a hostile tar
// sends.
func rawHeader(name string, typeflag byte, size int64) []byte {
	b := make([]byte, 512)
	copy(b[0:100], name)
	copy(b[100:108], "0000644\x00")
	copy(b[108:116], "0000000\x00")
	copy(b[116:124], "0000000\x00")
	copy(b[124:136], fmt.Sprintf("%011o\x00", size))
	copy(b[136:148], fmt.Sprintf("%011o\x00", 1700000000))
	b[156] = typeflag
	copy(b[257:265], "ustar\x0000")
	copy(b[148:156], "        ")
	var sum int
	for _, c := range b {
		sum += int(c)
	}
	copy(b[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

// block pads b to whole 512-byte blocks.
func block(b []byte) []byte {
	return append(b, make([]byte, (512-len(b)%512)%512)...)
}

// paxRecord is one "LEN key=value\n" record (LEN counts itself).
func paxRecord(k, v string) string {
	rest := " " + k + "=" + v + "\n"
	n := len(rest) + 1
	for len(fmt.Sprint(n))+len(rest) != n {
		n++
	}
	return fmt.Sprint(n) + rest
}

// sparseBomb is a GNU sparse 1.0 archive (PAX) of the file name whose real
// size is realsize: one 512-byte segment at its end, the rest a hole. The
// archive is 10 KiB.
func sparseBomb(name string, realsize int64) []byte {
	pax := paxRecord("GNU.sparse.major", "1") + paxRecord("GNU.sparse.minor", "0") +
		paxRecord("GNU.sparse.name", name) + paxRecord("GNU.sparse.realsize", fmt.Sprint(realsize))
	var a []byte
	a = append(a, rawHeader("PaxHeaders/"+name, 'x', int64(len(pax)))...)
	a = append(a, block([]byte(pax))...)
	sparseMap := block([]byte(fmt.Sprintf("1\n%d\n512\n", realsize-512)))
	data := bytes.Repeat([]byte("B"), 512)
	a = append(a, rawHeader("GNUSparseFile.0/"+name, '0', int64(len(sparseMap)+len(data)))...)
	a = append(a, sparseMap...)
	a = append(a, data...)
	return append(a, make([]byte, 10240-len(a))...) // the end blocks, to GNU tar's record
}

// A 10 KiB archive claiming a 2 GiB sparse file is refused: nothing is
// written, nothing is left.
func TestSparseTarBombIsRefused(t *testing.T) {
	bomb := sparseBomb("f", 2<<30)
	if len(bomb) != 10240 {
		t.Fatalf("the bomb is %d bytes", len(bomb))
	}
	dest := t.TempDir()
	ld, err := OpenBeneath(dest)
	must(t, err)
	defer func() { _ = ld.Close() }()
	j := testJob(io.Discard)
	err = j.unpackInto(context.Background(), ld, "", "f", noCount{}, func(w io.Writer) error {
		_, err := w.Write(bomb)
		return err
	})
	if err == nil || !strings.Contains(j.explain(err).Error(), "sparse") {
		t.Fatalf("got %v, want the sparse entry refused", err)
	}
	if names, _ := os.ReadDir(dest); len(names) != 0 {
		t.Fatalf("left behind: %v", names)
	}
}

// A file larger than what its file system has free fails before its first
// byte is written (an archive claiming 4 MiB, a 1 MiB tmpfs): the disk is
// never filled, and nothing is left.
func TestCopyOutChecksFreeSpaceFirst(t *testing.T) {
	testkit.RequireRoot(t, "mounting a small tmpfs")
	dest := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "crisp-cp-test", dest).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = unix.Unmount(dest, unix.MNT_DETACH) })
	ld, err := OpenBeneath(dest)
	must(t, err)
	defer func() { _ = ld.Close() }()
	j := testJob(io.Discard)
	var sent int64
	err = j.unpackInto(context.Background(), ld, "", "big.bin", noCount{}, func(w io.Writer) error {
		h := rawHeader("big.bin", '0', 4<<20)
		if _, err := w.Write(h); err != nil {
			return err
		}
		buf := make([]byte, 32<<10)
		for sent < 4<<20 {
			_, _ = rand.Read(buf)
			n, err := w.Write(buf)
			sent += int64(n)
			if err != nil {
				return err
			}
		}
		return nil
	})
	if !errors.Is(err, unix.ENOSPC) || !strings.Contains(err.Error(), "free") {
		t.Fatalf("got %v, want the free space named", err)
	}
	if sent >= 1<<20 {
		t.Fatalf("%d bytes of the file were taken before it failed: the disk was filled", sent)
	}
	if names, _ := os.ReadDir(dest); len(names) != 0 {
		t.Fatalf("left behind: %v", names)
	}
}

// --size-limit bounds a copy out's file content: past it the copy fails
// before the file that would cross it is written, and nothing is left.
func TestCopyOutSizeLimit(t *testing.T) {
	dest := t.TempDir()
	ld, err := OpenBeneath(dest)
	must(t, err)
	defer func() { _ = ld.Close() }()
	j := testJob(io.Discard)
	j.c.SizeLimit = 2 << 20
	var sent int64
	err = j.unpackInto(context.Background(), ld, "", "tree", noCount{}, func(w io.Writer) error {
		return threeFiles(countingWriter{w, &sent})
	})
	if !errors.Is(err, errTooLarge) || !strings.Contains(j.explain(err).Error(), "--size-limit 2.0 MiB") {
		t.Fatalf("got %v, want the limit named", err)
	}
	if sent > 2<<20+64<<10 { // headers, and what the pipe took of the third file
		t.Fatalf("%d bytes taken: the third file was copied", sent)
	}
	if names, _ := os.ReadDir(dest); len(names) != 0 {
		t.Fatalf("left behind: %v", names)
	}
	// The same copy within the limit goes through.
	j.c.SizeLimit = 3 << 20
	must(t, j.unpackInto(context.Background(), ld, "", "tree", noCount{}, threeFiles))
}

// threeFiles writes tree/ with three files of 1 MiB.
func threeFiles(w io.Writer) error {
	tw := tar.NewWriter(w)
	if err := tw.WriteHeader(&tar.Header{Name: "tree/", Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
		return err
	}
	for i := range 3 {
		if err := tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("tree/%d", i), Typeflag: tar.TypeReg, Mode: 0o644, Size: 1 << 20}); err != nil {
			return err
		}
		if _, err := tw.Write(make([]byte, 1<<20)); err != nil {
			return err
		}
	}
	return tw.Close()
}

type countingWriter struct {
	w io.Writer
	n *int64
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	*c.n += int64(n)
	return n, err
}
