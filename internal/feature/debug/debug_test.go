package debug

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A lease's owner reads back from its label; while the lease is held its
// owner is alive, once released (its file kept, as for --keep) it is gone,
// and with no lock file, or on another host, it cannot be checked.
func TestLeaseLiveness(t *testing.T) {
	l := Leases{Dir: filepath.Join(t.TempDir(), "crisp", "debug"), Host: "node1"}
	lease, err := l.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	back, ok := ParseOwner(lease.Owner.String())
	if !ok || back != lease.Owner {
		t.Fatalf("ParseOwner(%q) = %+v, %v", lease.Owner, back, ok)
	}
	if fi, err := os.Stat(l.Dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("lock directory: %v, %v; want 0700", fi, err)
	}
	if live, _ := l.Check(lease.Owner); live != Alive {
		t.Errorf("a held lease: %v, want Alive", live)
	}
	if live, _ := l.Check(Owner{Host: "node2", Token: lease.Owner.Token}); live != Unknown {
		t.Errorf("an owner on another host: %v, want Unknown", live)
	}
	lease.Release(true)
	live, sweeper := l.Check(lease.Owner)
	if live != Gone {
		t.Fatalf("a released lease: %v, want Gone", live)
	}
	// The sweeper holds the lock now: a second sweeper leaves the owner be.
	if live, _ := l.Check(lease.Owner); live != Alive {
		t.Errorf("a lease a sweeper holds: %v, want Alive", live)
	}
	sweeper.Release(false)
	if live, _ := l.Check(lease.Owner); live != Unknown {
		t.Errorf("a lease whose file is gone: %v, want Unknown", live)
	}
	for _, bad := range []string{"", "h", "h/1/2", "/" + strings.Repeat("a", 32), "h/" + strings.Repeat("A", 32), "h/../../../../etc/passwd", "h/" + strings.Repeat("a", 31)} {
		if _, ok := ParseOwner(bad); ok {
			t.Errorf("ParseOwner(%q) accepted", bad)
		}
	}
}

// A lock directory crisp does not own, or open to others, is refused; a
// lock file swapped for a link is not followed.
func TestLeaseDirectoryChecked(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "debug")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := (Leases{Dir: dir, Host: "h"}).Acquire(); err == nil {
		t.Error("a world-writable lock directory was used")
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	l := Leases{Dir: dir, Host: "h"}
	o := Owner{Host: "h", Token: strings.Repeat("b", 32)}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, o.Token+lockSuffix)); err != nil {
		t.Fatal(err)
	}
	if live, _ := l.Check(o); live != Unknown {
		t.Errorf("a lock file that is a link: %v, want Unknown", live)
	}
}

// A temporary lock file a crisp left between creating and renaming it is
// removed once it is older than the grace; lock files stay (a free one may
// stand for another runtime's container).
func TestLeaseTempsForgotten(t *testing.T) {
	l := Leases{Dir: filepath.Join(t.TempDir(), "debug"), Host: "h"}
	a, err := l.Acquire()
	if err != nil {
		t.Fatal(err)
	}
	a.Release(true)
	old := filepath.Join(l.Dir, tmpPrefix+strings.Repeat("d", tokenLen))
	young := filepath.Join(l.Dir, tmpPrefix+strings.Repeat("e", tokenLen))
	for _, p := range []string{old, young} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * tmpGrace)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	l.forgetTemps()
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("an old temporary lock file stays: %v", err)
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("a young temporary lock file went: %v", err)
	}
	if live, lease := l.Check(a.Owner); live != Gone {
		t.Errorf("a free lock file: %v, want Gone (kept)", live)
	} else {
		lease.Release(false)
	}
}

// In crisp's own PID namespace a process's namespace PID is its PID.
func TestNamespacePID(t *testing.T) {
	if n, ok := namespacePID(os.Getpid()); !ok || n != os.Getpid() {
		t.Errorf("namespacePID(self) = %d, %v", n, ok)
	}
	if _, ok := namespacePID(1 << 30); ok {
		t.Error("a PID that does not exist has a namespace PID")
	}
}

// The host way's busybox runs the command through its sh, so that an
// applet and a program of the target's are both found.
func TestHostArgs(t *testing.T) {
	got := strings.Join(hostArgs([]string{"ps", "-ef"}), " ")
	if want := `sh -c read -r go <&4 || exit 125; exec 4<&-; exec "$@" sh ps -ef`; got != want {
		t.Errorf("argv:\n got %s\nwant %s", got, want)
	}
}

// A status text gives the credentials the host way copies; one that lacks
// a field crisp needs is an error, not a zero (a zero uid is root's).
func TestParseCreds(t *testing.T) {
	status := "Name:\tsleep\nUid:\t1000\t1001\t1001\t1001\nGid:\t7\t8\t8\t8\nGroups:\t4 27 \n" +
		"CapInh:\t0000000000000000\nCapPrm:\t0000000000000021\nCapEff:\t0000000000000021\n" +
		"CapBnd:\t00000000a80425fb\nCapAmb:\t0000000000000001\nNoNewPrivs:\t1\nSeccomp:\t2\n"
	c, err := parseCreds(status)
	if err != nil {
		t.Fatal(err)
	}
	if c.uid != 1001 || c.gid != 8 || len(c.groups) != 2 || c.groups[1] != 27 || c.eff != 0x21 || c.bnd != 0xa80425fb || c.amb != 1 || !c.noNewPrivs || c.seccomp != 2 {
		t.Errorf("parseCreds: %+v", c)
	}
	if _, err := parseCreds(strings.Replace(status, "Uid:", "Xid:", 1)); err == nil {
		t.Error("a status without Uid parsed")
	}
	if got := capList(0x21); len(got) != 2 || got[0] != 0 || got[1] != 5 {
		t.Errorf("capList(0x21) = %v", got)
	}
}
