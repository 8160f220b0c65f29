package crictlconfig

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/base/outfile"
)

// hangGuard ends a test whose call blocked (the old code's failure) instead
// of letting it hang; the refusal itself takes no measurable time.
const hangGuard = 5 * time.Second

// unblocked runs fn, which may block in open(2) on the FIFO at fifo; past
// hangGuard it releases the open (a FIFO opened for reading and writing
// wakes a blocked reader and writer alike) and fails the test.
func unblocked(t *testing.T, fifo string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(hangGuard):
		if f, err := os.OpenFile(fifo, os.O_RDWR|syscall.O_NONBLOCK, 0); err == nil {
			_ = f.Close()
		}
		if err := <-done; err != nil {
			t.Logf("once released: %v", err)
		}
		t.Fatalf("still blocked on the FIFO at %s after %s", fifo, hangGuard)
		return nil
	}
}

func isFIFO(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.Mode()&os.ModeNamedPipe != 0
}

// A FIFO at the config file's path is refused, when crisp reads the file
// and when it writes it (planted after the read), at once, and left as it
// is; a link there is read but not written through (a usage error, as for
// every file crisp writes).
func TestConfigFileRefusesFIFOAndLink(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "crictl.yaml")
	if err := syscall.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	err := unblocked(t, fifo, func() error { _, err := Open(fifo); return err })
	if want := fifo + " is a named pipe (FIFO), not a regular file"; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("Open of a FIFO: %v, want it to end %q", err, want)
	}

	path := filepath.Join(dir, "planted.yaml")
	f, err := Open(path) // writes the missing file
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := f.Set("timeout", "5"); err != nil {
		t.Fatal(err)
	}
	err = unblocked(t, path, f.Write)
	if !errors.Is(err, outfile.ErrRefused) || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("Write to a FIFO: %v, want ErrRefused naming the named pipe", err)
	}
	if !isFIFO(fifo) || !isFIFO(path) {
		t.Error("a FIFO was replaced")
	}

	victim := filepath.Join(t.TempDir(), "victim.yaml")
	if err := os.WriteFile(victim, []byte("timeout: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	f, err = Open(link)
	if err != nil {
		t.Fatalf("Open of a link to a config file: %v", err)
	}
	if v, _ := f.Get("timeout"); v != "1" {
		t.Errorf("timeout through the link: %q", v)
	}
	if err := f.Set("timeout", "5"); err != nil {
		t.Fatal(err)
	}
	if err := f.Write(); !errors.Is(err, outfile.ErrRefused) {
		t.Errorf("Write through a link: %v, want ErrRefused", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "timeout: 1\n" {
		t.Errorf("written through the link: %q", b)
	}
}

// Write replaces the file with a new one: a new file is 0600, an existing
// one keeps its read bits but no one else's write bits, and a descriptor
// held on the old file never sees the new content.
func TestConfigFileReplacedNotReused(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "new.yaml")
	if _, err := Open(fresh); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("a new file: %v, %v; want 0600", fi.Mode(), err)
	}

	path := filepath.Join(dir, "crictl.yaml")
	if err := os.WriteFile(path, []byte("timeout: 1\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o666); err != nil { // past the umask
		t.Fatal(err)
	}
	old, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = old.Close() }()
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Set("timeout", "5"); err != nil {
		t.Fatal(err)
	}
	if err := f.Write(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the rewritten file: %v, %v; want 0644", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(path); !strings.HasPrefix(string(b), "timeout: 5\n") {
		t.Errorf("the rewritten file: %q", b)
	}
	buf := make([]byte, 64)
	n, _ := old.Read(buf)
	if string(buf[:n]) != "timeout: 1\n" {
		t.Errorf("the old file's reader sees %q", buf[:n])
	}
}
