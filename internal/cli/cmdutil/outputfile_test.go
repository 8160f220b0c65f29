package cmdutil

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A --junit path holding a FIFO or a link is a usage error at Validate; a
// missing path or a regular file is fine (Create replaces it at the end).
func TestCheckOutputFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.xml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.xml")
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), link); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain.xml")
	if err := os.WriteFile(plain, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{fifo: "named pipe", link: "symbolic link"} {
		err := CheckOutputFile("--junit", path)
		if err == nil || !IsUsage(err) || !strings.HasPrefix(err.Error(), "--junit "+path) || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckOutputFile(%s) = %v; want a usage error naming --junit and a %s", path, err, want)
		}
	}
	for _, path := range []string{"", plain, filepath.Join(dir, "new.xml")} {
		if err := CheckOutputFile("--junit", path); err != nil {
			t.Errorf("CheckOutputFile(%q) = %v, want nil", path, err)
		}
	}
}
