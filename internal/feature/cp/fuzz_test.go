package cp

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
		_, _ = Unpack(tar.NewReader(bytes.NewReader(data)), d, "stage", Landing{})
		names, err := os.ReadDir(base)
		if err != nil || len(names) != 1 || names[0].Name() != "dest" {
			t.Fatalf("written beside the destination: %v", names)
		}
		_ = d.RemoveAll("stage")
	})
}
