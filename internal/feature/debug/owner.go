package debug

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Owner is the crisp process that created a debug container, as its
// LabelOwner label names it: the node's host name and a random token. The
// owner's liveness is not a PID (a crisp in another PID namespace has a PID
// that means nothing here) but a lock: while the owner runs it holds an
// exclusive flock on LockDir/TOKEN.lock, which the kernel releases when it
// ends, however it ends.
type Owner struct {
	Host  string
	Token string
}

// String is the owner as the LabelOwner label holds it: HOST/TOKEN.
func (o Owner) String() string { return o.Host + "/" + o.Token }

// tokenLen is the length of a token: 16 random bytes in hex.
const tokenLen = 32

// ParseOwner reads a LabelOwner value. Labels are untrusted: the token
// becomes a file name, so only lower-case hex of the right length passes.
func ParseOwner(s string) (Owner, bool) {
	host, token, ok := strings.Cut(s, "/")
	if !ok || host == "" || len(token) != tokenLen || strings.Trim(token, "0123456789abcdef") != "" {
		return Owner{}, false
	}
	return Owner{Host: host, Token: token}, true
}

// Leases keeps the owners' locks in Dir, a directory crisp owns.
type Leases struct {
	// Dir holds one lock file per owner (DefaultLockDir).
	Dir string
	// Host is this node's host name (os.Hostname).
	Host string
}

// RootLockDir is where crisp running as root keeps its owners' locks: on
// the node's tmpfs, so a reboot (which ends every owner) empties it.
const RootLockDir = "/run/crisp/debug"

// DefaultLeases is this node's Leases: RootLockDir for root, else a
// directory of the user's ($XDG_RUNTIME_DIR/crisp/debug, or
// $TMPDIR/crisp-UID/debug).
func DefaultLeases() Leases {
	host, _ := os.Hostname() // an empty host name only makes every owner look foreign
	dir := RootLockDir
	if os.Geteuid() != 0 {
		if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" {
			dir = filepath.Join(x, "crisp", "debug")
		} else {
			dir = filepath.Join(os.TempDir(), fmt.Sprintf("crisp-%d", os.Geteuid()), "debug")
		}
	}
	return Leases{Dir: dir, Host: host}
}

// ensureDir creates l.Dir (and its parent) 0700 and checks that it is a
// directory, not a link, owned by this user and closed to others: a lock
// directory someone else controls could fake any owner's liveness.
func (l Leases) ensureDir() error {
	for _, d := range []string{filepath.Dir(l.Dir), l.Dir} {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("debug: creating crisp's lock directory: %w", err)
		}
	}
	fi, err := os.Lstat(l.Dir)
	if err != nil {
		return fmt.Errorf("debug: crisp's lock directory: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("debug: crisp's lock directory %s is not a directory of this user closed to others (%v); remove it and try again", l.Dir, fi.Mode())
	}
	return nil
}

// Lease is an owner's lock, held from before its debug container exists
// until the owner ends.
type Lease struct {
	Owner Owner
	f     *os.File
	path  string
}

// Acquire makes a new owner and takes its lock. The lock file appears
// under its final name already locked (written under a temporary name,
// locked, then renamed), so no one ever sees it free while its owner runs.
func (l Leases) Acquire() (*Lease, error) {
	if err := l.ensureDir(); err != nil {
		return nil, err
	}
	var b [tokenLen / 2]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail on Linux
	o := Owner{Host: l.Host, Token: hex.EncodeToString(b[:])}
	tmp := filepath.Join(l.Dir, tmpPrefix+o.Token)
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("debug: creating the session's lock: %w", err)
	}
	path := filepath.Join(l.Dir, o.Token+lockSuffix)
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		_ = os.Remove(tmp)
		return nil, fmt.Errorf("debug: locking %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = f.Close()
		_ = os.Remove(tmp)
		return nil, fmt.Errorf("debug: creating the session's lock: %w", err)
	}
	return &Lease{Owner: o, f: f, path: path}, nil
}

// Release ends the lease: the lock file goes, unless keep (a --keep
// container's lease stays, free, for --cleanup to find), and the lock is
// released.
func (s *Lease) Release(keep bool) {
	if !keep {
		_ = os.Remove(s.path) // a missing file only makes the owner look unknown
	}
	_ = s.f.Close() // releases the lock; nothing to report on a file only locked
}

// Liveness is what a lease says of its owner.
type Liveness int

// The answers of Leases.Check.
const (
	// Unknown: no lock file here (another host, another /run, another
	// user, an older crisp): the owner's containers are left alone.
	Unknown Liveness = iota
	// Alive: the owner holds its lock.
	Alive
	// Gone: the lock file is here and free: its owner has ended.
	Gone
)

// Check reads o's liveness. For Gone it returns the lock, now held by the
// caller, so that two sweepers never both take an owner for gone; the
// caller ends it with Forget once the owner's containers are removed.
func (l Leases) Check(o Owner) (Liveness, *Lease) {
	if o.Host != l.Host {
		return Unknown, nil
	}
	path := filepath.Join(l.Dir, o.Token+lockSuffix)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return Unknown, nil
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		_ = f.Close()
		return Unknown, nil
	}
	switch err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); {
	case err == nil:
		return Gone, &Lease{Owner: o, f: f, path: path}
	case errors.Is(err, syscall.EWOULDBLOCK):
		_ = f.Close()
		return Alive, nil
	default:
		_ = f.Close()
		return Unknown, nil
	}
}

// Names in the lock directory.
const (
	lockSuffix = ".lock"
	tmpPrefix  = ".tmp-"
)

// tmpGrace is how old a temporary lock file must be before a sweep takes
// it for one a crisp left between creating and renaming it.
const tmpGrace = time.Minute

// maxLockFiles bounds the lock directory's entries one sweep looks at.
const maxLockFiles = 4096

// forgetTemps removes the temporary lock files of crisps killed between
// creating and renaming them. Lock files are left: a free one may still
// stand for a kept or leftover container of another runtime on this node,
// which only a sweep of that runtime can see (so a crisp killed before its
// container existed leaves an empty file in the node's tmpfs).
func (l Leases) forgetTemps() {
	d, err := os.Open(l.Dir)
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(maxLockFiles)
	_ = d.Close()
	for _, name := range names {
		if tok, ok := strings.CutPrefix(name, tmpPrefix); ok && len(tok) == tokenLen {
			if fi, err := os.Lstat(filepath.Join(l.Dir, name)); err == nil && time.Since(fi.ModTime()) > tmpGrace {
				_ = os.Remove(filepath.Join(l.Dir, name))
			}
		}
	}
}
