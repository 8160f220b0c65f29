package cp

import (
	"archive/tar"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
)

// FuzzParseArgs: any two arguments give a request or a usage error, never
// a panic; a request has exactly one container and an absolute remote path.
func FuzzParseArgs(f *testing.F) {
	for _, seed := range [][2]string{{"web:/etc/hosts", "."}, {"./a:b", "c:/x"}, {":", ":"}, {"a:b:c", "/d"}, {"", ""}, {"x/y:z", "w:/"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, src, dst string) {
		r, err := ParseArgs(src, dst)
		if err != nil {
			if !cmdutil.IsUsage(err) {
				t.Fatalf("%q %q: %v is not a usage error", src, dst, err)
			}
			return
		}
		if r.Container == "" || strings.Contains(r.Container, "/") || !strings.HasPrefix(r.Remote, "/") || r.Local == "" {
			t.Fatalf("%q %q: %+v", src, dst, r)
		}
	})
}

// FuzzUnpack: whatever the archive, nothing is written outside the
// destination directory.
func FuzzUnpack(f *testing.F) {
	for _, entries := range [][]entry{
		{dir("top"), file("top/a", "x"), symlink("top/l", "/"), file("top/l/etc/x", "y")},
		{file("../x", "x")},
		{dir("top"), hardlink("top/h", "top/../../x")},
		{dir("top"), symlink("top/up", ".."), dir("top/up/x")},
		{dir("top"), dir("top/a"), symlink("top/a/up", ".."), symlink("top/x", "a/up/.."), symlink("top/y", "a/up/a/up/x")},
		{symlink("top", "../etc")},
	} {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, e := range entries {
			h := e.hdr
			_ = tw.WriteHeader(&h)
			_, _ = tw.Write([]byte(e.body))
		}
		_ = tw.Close()
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		base := t.TempDir()
		dest := filepath.Join(base, "dest")
		if err := os.Mkdir(dest, 0o755); err != nil {
			t.Fatal(err)
		}
		d, err := OpenBeneath(dest)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = d.Close() }()
		_, _ = Unpack(tar.NewReader(bytes.NewReader(data)), d, "stage", Landing{FromContainer: true})
		names, err := os.ReadDir(base)
		if err != nil || len(names) != 1 || names[0].Name() != "dest" {
			t.Fatalf("written beside the destination: %v", names)
		}
		// Every symlink that landed, followed by the kernel, stays in the
		// copy (or in dest, for a copy of one link).
		within := filepath.Join(dest, "stage")
		if st, err := os.Lstat(within); err == nil && !st.IsDir() {
			within = dest
		}
		_ = filepath.WalkDir(within, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.Type()&fs.ModeSymlink == 0 {
				return nil
			}
			rel, _ := filepath.Rel(within, p)
			dfd, err := unix.Open(within, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = unix.Close(dfd) }()
			fd, err := unix.Openat2(dfd, rel, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_BENEATH})
			if err == nil {
				_ = unix.Close(fd)
			}
			if errors.Is(err, unix.EXDEV) {
				target, _ := os.Readlink(p)
				t.Fatalf("%s -> %s leads out of the copy", rel, target)
			}
			return nil
		})
		_ = d.RemoveAll("stage")
	})
}
