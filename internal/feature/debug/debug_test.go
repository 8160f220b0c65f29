package debug

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// An owner label reads back as written; this process is alive, a process
// that has ended is not, and an owner on another host is left alone.
func TestOwner(t *testing.T) {
	me := OwnerOf(os.Getpid())
	if me.Start == 0 || me.PID != os.Getpid() {
		t.Fatalf("OwnerOf(self) = %+v", me)
	}
	back, ok := ParseOwner(me.String())
	if !ok || back != me {
		t.Fatalf("ParseOwner(%q) = %+v, %v", me.String(), back, ok)
	}
	if !OwnerAlive(me) {
		t.Error("this process is not alive")
	}
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}
	gone := Owner{Host: me.Host, PID: ended.Process.Pid, Start: me.Start}
	if OwnerAlive(gone) {
		t.Errorf("an ended process (%+v) is alive", gone)
	}
	reused := me
	reused.Start++ // the PID now names another process
	if OwnerAlive(reused) {
		t.Error("a reused PID is taken for the owner")
	}
	if !OwnerAlive(Owner{Host: me.Host + "-elsewhere", PID: 1 << 30}) {
		t.Error("an owner on another host is taken for gone")
	}
	for _, bad := range []string{"", "h/1", "h/x/1", "h/1/-1", "a/b/c/d"} {
		if _, ok := ParseOwner(bad); ok {
			t.Errorf("ParseOwner(%q) accepted", bad)
		}
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

// The host way enters every namespace but the mount one and mounts a /proc
// of the target's PID namespace before the command.
func TestHostArgv(t *testing.T) {
	p := &hostPlan{pid: 77, nsenter: "/usr/bin/nsenter", unshare: "/usr/bin/unshare"}
	got := strings.Join(p.hostArgv([]string{"ps", "-ef"}), " ")
	want := "/usr/bin/nsenter --target 77 --pid --net --ipc --uts -- /usr/bin/unshare --mount --propagation private --mount-proc -- ps -ef"
	if got != want {
		t.Errorf("argv:\n got %s\nwant %s", got, want)
	}
}
