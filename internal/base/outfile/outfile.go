// Package outfile opens the files a user names for crisp to write (a
// --trace-file, a --record, a --junit report, generated docs). crisp runs
// as root, often in directories other users can write to: whatever sits at
// the path may have been planted there. So Create never opens what is
// there: it refuses anything but a regular file (a FIFO would block open(2)
// beyond any signal, a link would be followed, a device written), and it
// never writes into an existing file (whoever owns it could read what crisp
// writes): it writes a new file of its own beside it and renames that over
// the path. It knows nothing of what the files hold.
package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/crisp-cri/crisp/internal/base/input"
)

// ErrRefused is wrapped by Create's errors about what sits at the path (a
// FIFO, a link, a directory, a device): the command line named a path
// crisp will not write, a usage error.
var ErrRefused = errors.New("not a regular file")

// Create makes a new, empty file for writing at path with mode perm, owned
// by the caller, and returns it open. A regular file already at path is
// replaced, not reused: its inode, owner and readers keep the old content
// and never see the new. Anything else at path is refused (ErrRefused) and
// left as it is. The new file is created beside path (O_EXCL, mode 0600,
// never following a link) and renamed over path at once, so path holds
// the file while it is written: a trace can be read during the session and
// after a crash. Writing needs a directory the caller can create files in.
func Create(path string, perm fs.FileMode) (*os.File, error) {
	if err := Check(path); err != nil {
		return nil, err
	}
	tmp, f, err := createBeside(path)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot create a file beside it: %w", path, err)
	}
	fail := func(err error) (*os.File, error) {
		_ = f.Close()      // the error to report is err
		_ = os.Remove(tmp) // leave nothing behind
		return nil, err
	}
	if perm != 0o600 {
		if err := f.Chmod(perm); err != nil {
			return fail(fmt.Errorf("%s: %w", path, err))
		}
	}
	// rename(2) replaces the name, never what it points to: a FIFO, link or
	// someone's file swapped in since check is unlinked, not opened.
	if err := os.Rename(tmp, path); err != nil {
		return fail(fmt.Errorf("%s: cannot put the new file in place: %w", path, err))
	}
	if err := samePlace(f, path); err != nil {
		_ = f.Close() // the file at path is not ours: say so, write nothing
		return nil, err
	}
	return f, nil
}

// createBeside creates a new file in path's directory under a name of its
// own and returns that name and the file, named path (what its errors and
// Name should say once it is renamed). O_EXCL fails on anything already at
// the name, a link included; nothing blocks.
func createBeside(path string) (string, *os.File, error) {
	dir, base := filepath.Split(path)
	for range 100 {
		tmp := filepath.Join(dir, "."+base+".crisp-"+strconv.FormatUint(rand.Uint64(), 36))
		fd, err := syscall.Open(tmp, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
		if errors.Is(err, syscall.EEXIST) {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		return tmp, os.NewFile(uintptr(fd), path), nil
	}
	return "", nil, errors.New("no free temporary name after 100 tries")
}

// Check refuses what Create must not replace; a missing path is fine. A
// command whose file is written at its end (a JUnit report) calls it in
// Validate too, so a FIFO or link there is refused before the run, not
// after it.
func Check(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if fi.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("%s is %s, %w: crisp writes only a new or a regular file there (remove it or name another path)", path, input.FileKind(fi.Mode()), ErrRefused)
}

// samePlace says whether path now names f, the file crisp created: in a
// directory others can write to, the name could be moved away between the
// rename and now, and then what crisp writes would go nowhere the user sees.
func samePlace(f *os.File, path string) error {
	mine, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	there, err := os.Lstat(path)
	if err != nil || !os.SameFile(mine, there) {
		return fmt.Errorf("%s was replaced by another file while crisp created it (someone else writes in %s): name a path in a directory only you can write to", path, filepath.Dir(path))
	}
	return nil
}
