package cp

import (
	"archive/tar"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// A copy out writes on the node: a setuid root binary from the container
// must not land as one (`chmod 4755 /s/tool` in the container, then
// `crisp cp C:/s/tool out/`). Both ways: an archive from the container's
// tar, and a file read through the container's root.
func TestCopyOutDropsSetuidSetgidAndSticky(t *testing.T) {
	// The tar way: what the container's tar says.
	dest := t.TempDir()
	copyOut(t, dest, "tree", io.Discard, func(w io.Writer) error {
		tw := tar.NewWriter(w)
		for _, h := range []tar.Header{
			{Name: "tree/", Typeflag: tar.TypeDir, Mode: 0o2775},
			{Name: "tree/tool", Typeflag: tar.TypeReg, Mode: 0o4755, Size: 1},
			{Name: "tree/tmp/", Typeflag: tar.TypeDir, Mode: 0o1777},
		} {
			if err := tw.WriteHeader(&h); err != nil {
				return err
			}
			if h.Size > 0 {
				_, _ = tw.Write([]byte("x"))
			}
		}
		return tw.Close()
	})
	wantMode(t, filepath.Join(dest, "tree"), os.ModeDir|0o775)
	wantMode(t, filepath.Join(dest, "tree", "tool"), 0o755)
	wantMode(t, filepath.Join(dest, "tree", "tmp"), os.ModeDir|0o777)

	// The root way: a file in the container's root, packed from there.
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "s"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "s", "tool"), []byte("#!/bin/sh\n"), 0o755))
	must(t, os.Chmod(filepath.Join(root, "s", "tool"), 0o755|os.ModeSetuid))
	d, err := OpenInRoot(root, "container ctr")
	must(t, err)
	defer func() { _ = d.Close() }()
	out := t.TempDir()
	copyOut(t, out, "tool", io.Discard, func(w io.Writer) error { return packTo(d, "s/tool", "tool", w, func(string) {}) })
	wantMode(t, filepath.Join(out, "tool"), 0o755)
}

func wantMode(t *testing.T, name string, want os.FileMode) {
	t.Helper()
	st, err := os.Lstat(name)
	must(t, err)
	if st.Mode()&(os.ModeType|os.ModePerm|os.ModeSetuid|os.ModeSetgid|os.ModeSticky) != want {
		t.Errorf("%s: mode %v, want %v", name, st.Mode(), want)
	}
}

// The umask applies to what a copy out writes; --preserve-mode (KeepModes)
// keeps the archive's modes whole.
func TestCopyOutUmaskAndPreserveMode(t *testing.T) {
	produce := func(w io.Writer) error {
		tw := tar.NewWriter(w)
		for _, h := range []tar.Header{
			{Name: "tree/", Typeflag: tar.TypeDir, Mode: 0o777},
			{Name: "tree/tool", Typeflag: tar.TypeReg, Mode: 0o4757},
		} {
			if err := tw.WriteHeader(&h); err != nil {
				return err
			}
		}
		return tw.Close()
	}
	for _, tc := range []struct {
		name              string
		keep              bool
		umask             os.FileMode
		wantDir, wantFile os.FileMode
	}{
		{name: "umask 027", umask: 0o027, wantDir: os.ModeDir | 0o750, wantFile: 0o750},
		{name: "umask 022", umask: 0o022, wantDir: os.ModeDir | 0o755, wantFile: 0o755},
		{name: "preserve-mode", keep: true, umask: 0o027, wantDir: os.ModeDir | 0o777, wantFile: os.ModeSetuid | 0o757},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dest := t.TempDir()
			ld, err := OpenBeneath(dest)
			must(t, err)
			defer func() { _ = ld.Close() }()
			j := testJob(io.Discard)
			j.c.KeepModes, j.c.Umask = tc.keep, tc.umask
			must(t, j.unpackInto(context.Background(), ld, "", "tree", noCount{}, produce))
			wantMode(t, filepath.Join(dest, "tree"), tc.wantDir)
			wantMode(t, filepath.Join(dest, "tree", "tool"), tc.wantFile)
		})
	}
}

func TestCurrentUmask(t *testing.T) {
	old := unix.Umask(0o027)
	defer unix.Umask(old)
	if got := CurrentUmask(); got != 0o027 {
		t.Fatalf("got %#o, want 027", got)
	}
}
