package testkit

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// RepoRoot is the folder holding go.mod above the working directory (a
// test runs in its package's folder).
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's folder")
		}
		dir = parent
	}
}

// EnvOr is $key, or def when it is unset or empty.
func EnvOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// LockFile takes an exclusive lock on path (created if missing), waiting
// for it: test binaries that share a harness (two `go test` runs at once)
// take turns. The returned function releases it.
func LockFile(path string) (func(), error) {
	unlock, err := lockFile(path, syscall.LOCK_EX)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return unlock, nil
}

// TryLockFile is LockFile without the wait: ok is false, and nothing is
// held, when another process holds path's lock.
func TryLockFile(path string) (unlock func(), ok bool, err error) {
	unlock, err = lockFile(path, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("locking %s: %w", path, err)
	}
	return unlock, true, nil
}

func lockFile(path string, how int) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), how); err != nil {
		_ = f.Close() // the lock failed; the close cannot tell more
		return nil, err
	}
	return func() { _ = f.Close() }, nil // closing releases the lock
}
