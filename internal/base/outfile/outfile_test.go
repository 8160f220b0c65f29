package outfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// TestCreateNew: a new path gets a file of mode perm owned by the caller,
// and nothing is left beside it.
func TestCreateNew(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.jsonl")
	for _, perm := range []os.FileMode{0o600, 0o644} {
		f, err := Create(path, perm)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name() != path {
			t.Errorf("the file is named %q, want %q (its errors name it)", f.Name(), path)
		}
		if _, err := f.WriteString("trace\n"); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != perm {
			t.Fatalf("perm %v: the file at the path is %v, %v", perm, fi.Mode(), err)
		}
		if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != os.Geteuid() {
			t.Errorf("owned by uid %d, want %d", st.Uid, os.Geteuid())
		}
		if data, _ := os.ReadFile(path); string(data) != "trace\n" {
			t.Errorf("read back %q", data)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %d entries, want only the file: %v", len(entries), entries)
	}
}

// TestCreateReplacesNotReuses: an existing file of the caller's is replaced
// by a fresh 0600 one; a hard link to the old file (or an open descriptor)
// keeps the old content and never sees the new.
func TestCreateReplacesNotReuses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.jsonl")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(dir, "elsewhere")
	if err := os.Link(path, keep); err != nil {
		t.Fatal(err)
	}
	f, err := Create(path, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("secret")
	_ = f.Close()
	if data, _ := os.ReadFile(keep); string(data) != "old" {
		t.Errorf("the old file was written through: %q", data)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
}

// TestCreateRefusesFIFO: a FIFO at the path is refused, with no reader
// (where the old code blocked in open(2) until one came, deaf to signals)
// and with one (where it wrote into the pipe), and stays as it was.
func TestCreateRefusesFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.jsonl")
	if err := syscall.Mkfifo(path, 0o666); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		f, err := Create(path, 0o600)
		if f != nil {
			_ = f.Close()
		}
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(hangGuard):
		// Release the blocked open with a reader so the test can end.
		r, rerr := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err := <-done; err != nil {
			t.Logf("Create, once released: %v", err)
		}
		if rerr == nil {
			_ = r.Close()
		}
		t.Fatalf("Create still blocked on a FIFO without a reader after %s", hangGuard)
	}
	checkFIFORefused(t, path, err)

	// With a reader waiting, the old code wrote into the pipe.
	r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	f, err := Create(path, 0o600)
	if f != nil {
		_, _ = f.WriteString("payload")
		_ = f.Close()
	}
	checkFIFORefused(t, path, err)
}

// hangGuard ends a test whose call blocked (the old code's failure) instead
// of letting it hang; the refusal itself takes no measurable time.
const hangGuard = 5 * time.Second

func checkFIFORefused(t *testing.T, path string, err error) {
	t.Helper()
	if !errors.Is(err, ErrRefused) || !strings.Contains(fmt.Sprint(err), "named pipe") {
		t.Errorf("error %v: want ErrRefused naming the named pipe", err)
	}
	if fi, _ := os.Lstat(path); fi == nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced")
	}
}

// TestCreateRefusesOthers: a symbolic link (to a file or dangling), a
// directory or a device at the path is refused and what a link points to is
// neither written nor created.
func TestCreateRefusesOthers(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "created-through-link"), dangling); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for path, what := range map[string]string{link: "symbolic link", dangling: "symbolic link", sub: "directory", "/dev/null": "character device"} {
		f, err := Create(path, 0o600)
		if err == nil {
			_ = f.Close()
			t.Errorf("%s: created", path)
			continue
		}
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), what) {
			t.Errorf("%s: error %q; want ErrRefused naming the %s", path, err, what)
		}
	}
	if data, _ := os.ReadFile(victim); string(data) != "keep me" {
		t.Errorf("the link's target changed: %q", data)
	}
	if _, err := os.Lstat(filepath.Join(dir, "created-through-link")); err == nil {
		t.Error("a dangling link's target was created")
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
}

// TestCreateOtherUsersFile: as root, a file someone else (uid 65534) put
// at the path in a directory everyone can write to is not written through:
// the descriptor its owner keeps open reads only the owner's own bytes, and
// the path now holds root's 0600 file, which the owner cannot open. The
// old code truncated the owner's file, wrote into it and left it theirs.
func TestCreateOtherUsersFile(t *testing.T) {
	testkit.RequireRoot(t, "giving a file to another user")
	pub, err := os.MkdirTemp("", "crisp-outfile-pub-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(pub) })
	if err := os.Chmod(pub, 0o1777); err != nil { // like /tmp
		t.Fatal(err)
	}
	path := filepath.Join(pub, "f.jsonl")
	if err := os.WriteFile(path, []byte("mine\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	held, err := os.Open(path) // the owner keeps it open to read what comes
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = held.Close() }()

	f, err := Create(path, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("stdout payload: hunter2\n"); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()

	if data, _ := io.ReadAll(held); string(data) != "mine\n" {
		t.Errorf("the other user's file now reads %q", data)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("the file at the path: uid %d mode %v; want root's, 0600", st.Uid, fi.Mode().Perm())
	}
	// The owner tries to read the path.
	cat := exec.CommandContext(t.Context(), "cat", path)
	cat.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if out, err := cat.CombinedOutput(); err == nil || strings.Contains(string(out), "hunter2") {
		t.Errorf("uid 65534 read the trace: %q, %v", out, err)
	}
	if data, _ := os.ReadFile(path); string(data) != "stdout payload: hunter2\n" {
		t.Errorf("the trace reads %q", data)
	}
}
