package cp

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkPackManyFiles packs a tree of 2000 small files through a root
// (the root way's walk: each entry opened once by descriptor, a file
// reopened through /proc/self/fd), for the cost per file of that care.
func BenchmarkPackManyFiles(b *testing.B) {
	root := b.TempDir()
	for i := range 2000 {
		dir := filepath.Join(root, "t", fmt.Sprint(i%20))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), []byte("a small file\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	d, err := OpenInRoot(root, "container ctr")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = d.Close() }()
	for b.Loop() {
		tw := tar.NewWriter(io.Discard)
		if err := Pack(d, "t", "t", tw, noCount{}, func(string) {}); err != nil {
			b.Fatal(err)
		}
	}
}
