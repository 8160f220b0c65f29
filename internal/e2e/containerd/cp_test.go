package containerd

// crisp cp against the real runtimes: a distroless-like target (one static
// binary, no shell, no tar) reached through the node's view of its root,
// and the busybox container through tar over exec.

import (
	"bytes"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// distrolessImage is the image of one static binary (the echo server, at
// /crisp) and nothing else, built once per test binary.
var distrolessImage struct {
	once sync.Once
	tar  string
	err  error
}

const distrolessRef = "docker.io/library/crisp-cp-distroless:e2e"

func distrolessTar(t *testing.T) string {
	t.Helper()
	d := &distrolessImage
	d.once.Do(func() {
		d.tar = filepath.Join(suite.binDir, "crisp-cp-distroless.tar")
		pack := exec.Command("go", "run", "./cmd/crisp-image", "-binary", echoServerBinary(t), "-name", "crisp-cp-distroless", "-tag", "e2e", "-o", d.tar)
		pack.Dir = suite.repo
		if out, err := pack.CombinedOutput(); err != nil {
			d.err = err
			t.Logf("crisp-image: %s", out)
		}
	})
	if d.err != nil {
		t.Fatal(d.err)
	}
	return d.tar
}

// `crisp cp T:/etc/app.conf .` and back on a target with no shell and no
// tar: auto finds no tar, goes through /proc/PID/root, and the file comes
// back byte-equal; a symlink to / planted in the container leads to the
// container's root, never the node's.
func TestCpDistroless(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		h.loadImage(t, distrolessTar(t), distrolessRef)
		ctr := h.newContainer(t, ContainerSpec{Name: "distroless", Image: distrolessRef, Command: []string{"/crisp", "18777"}})
		dir := t.TempDir()
		conf := filepath.Join(dir, "app.conf")
		want := make([]byte, 200<<10)
		_, _ = rand.Read(want)
		if err := os.WriteFile(conf, want, 0o640); err != nil {
			t.Fatal(err)
		}
		r := h.crisp(t, "-v", "cp", conf, ctr+":/etc/app.conf")
		if r.ExitCode != 0 || !strings.Contains(r.Stderr, "has no tar") || !strings.Contains(r.Stderr, "/root (pid ") {
			t.Fatalf("cp in: %v", r)
		}
		out := filepath.Join(dir, "out")
		if err := os.Mkdir(out, 0o755); err != nil {
			t.Fatal(err)
		}
		if r := h.crisp(t, "cp", ctr+":/etc/app.conf", out); r.ExitCode != 0 {
			t.Fatalf("cp out: %v", r)
		}
		got, err := os.ReadFile(filepath.Join(out, "app.conf"))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("round trip: %d bytes, %v; want %d equal bytes", len(got), err, len(want))
		}
		if st, _ := os.Stat(filepath.Join(out, "app.conf")); st.Mode().Perm() != 0o640 {
			t.Errorf("mode %v, want 0640", st.Mode().Perm())
		}

		// A tree with `escape -> /` goes in; a copy through escape lands in
		// the container's root.
		tree := filepath.Join(dir, "tree")
		if err := os.Mkdir(tree, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/", filepath.Join(tree, "escape")); err != nil {
			t.Fatal(err)
		}
		if r := h.crisp(t, "cp", tree, ctr+":/tree"); r.ExitCode != 0 {
			t.Fatalf("cp tree in: %v", r)
		}
		probe := "crisp-cp-probe-" + filepath.Base(dir)
		if r := h.crisp(t, "cp", conf, ctr+":/tree/escape/"+probe); r.ExitCode != 0 {
			t.Fatalf("cp through escape: %v", r)
		}
		if _, err := os.Lstat("/" + probe); err == nil {
			_ = os.Remove("/" + probe)
			t.Fatalf("/%s was written on the node through the container's symlink", probe)
		}
		back := filepath.Join(dir, "back")
		if r := h.crisp(t, "cp", ctr+":/"+probe, back); r.ExitCode != 0 {
			t.Fatalf("cp from the container's root: %v", r)
		}
		if got, _ := os.ReadFile(back); !bytes.Equal(got, want) {
			t.Fatal("the copy through escape is not at the container's root")
		}

		// Missing path and stopped container: 1, one line each.
		if r := h.crisp(t, "cp", ctr+":/no/such", dir); r.ExitCode != 1 || !strings.Contains(r.Stderr, "no such file or directory") {
			t.Errorf("missing path: %v", r)
		}
	})
}

// The busybox container has tar: auto copies a tree in and out over exec,
// byte-equal, modes and links kept, nothing staged left.
func TestCpTarOverExec(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		dir := t.TempDir()
		tree := filepath.Join(dir, "tree")
		if err := os.MkdirAll(filepath.Join(tree, "sub"), 0o750); err != nil {
			t.Fatal(err)
		}
		want := make([]byte, 3<<20)
		_, _ = rand.Read(want)
		if err := os.WriteFile(filepath.Join(tree, "sub", "data.bin"), want, 0o604); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("sub/data.bin", filepath.Join(tree, "link")); err != nil {
			t.Fatal(err)
		}
		r := h.crisp(t, "-v", "cp", tree, h.Ctr+":/tmp/cp-tree")
		if r.ExitCode != 0 || !strings.Contains(r.Stderr, "tar over exec") || strings.Contains(r.Stderr, "has no tar") {
			t.Fatalf("cp in: %v", r)
		}
		if r := h.crisp(t, "cp", h.Ctr+":/tmp/cp-tree", filepath.Join(dir, "back")); r.ExitCode != 0 {
			t.Fatalf("cp out: %v", r)
		}
		got, err := os.ReadFile(filepath.Join(dir, "back", "sub", "data.bin"))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("round trip: %d bytes, %v", len(got), err)
		}
		if st, _ := os.Stat(filepath.Join(dir, "back", "sub", "data.bin")); st.Mode().Perm() != 0o604 {
			t.Errorf("mode %v, want 0604", st.Mode().Perm())
		}
		if l, _ := os.Readlink(filepath.Join(dir, "back", "link")); l != "sub/data.bin" {
			t.Errorf("link -> %q", l)
		}
		if r := h.crisp(t, "exec", h.Ctr, "--", "sh", "-c", "ls -a /tmp | grep -c crisp-cp"); strings.TrimSpace(r.Stdout) != "0" {
			t.Errorf("staged copies left in /tmp: %v", r)
		}
	})
}

// hostileTree is a container's tree that a copy out must not bring to the
// node as it is: a setuid-root file, a setgid directory, a symlink to the
// node's /etc/shadow and one climbing to its /etc; d/in stays inside.
const hostileTree = `set -e
mkdir -p /d/sub
echo tool > /d/tool
chmod 4755 /d/tool
chmod 2775 /d/sub
ln -s /etc/shadow /d/abs
ln -s ../../../../../etc /d/up
ln -s tool /d/in
touch /ready
exec sleep 2147483647`

// `crisp cp C:/d out/` from a hostile container, by the container's tar and
// through its root: the setuid and setgid bits are dropped, the links that
// lead out are skipped with a warning naming each, the link inside is kept.
// Then the container's tar is replaced by one that sends a 10 KiB GNU
// sparse archive of a 2 GiB file: the copy fails, saying so, and leaves
// nothing.
func TestCpOutOfAHostileContainer(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		ctr := h.newContainer(t, ContainerSpec{Name: "hostile-tree", Command: []string{"sh", "-c", hostileTree}})
		root := "/proc/" + strconv.Itoa(containerPID(t, h, ctr)) + "/root"
		waitFor(t, filepath.Join(root, "ready"))
		for _, via := range []string{"tar", "root"} {
			out := filepath.Join(t.TempDir(), via)
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
			r := h.crisp(t, "cp", "--way", via, ctr+":/d", out+"/")
			if r.ExitCode != 0 {
				t.Fatalf("via %s: %v", via, r)
			}
			for _, name := range []string{"tool", "sub"} {
				st, err := os.Stat(filepath.Join(out, "d", name))
				if err != nil || st.Mode()&(os.ModeSetuid|os.ModeSetgid|os.ModeSticky) != 0 || st.Mode().Perm()&^0o775 != 0 {
					t.Errorf("via %s: d/%s mode %v, %v; want no setuid/setgid, the umask applied", via, name, st.Mode(), err)
				}
			}
			for _, name := range []string{"abs", "up"} {
				if l, err := os.Readlink(filepath.Join(out, "d", name)); err == nil {
					t.Errorf("via %s: d/%s -> %s landed on the node", via, name, l)
				}
				if !strings.Contains(r.Stderr, "skipping d/"+name+": a symlink to ") {
					t.Errorf("via %s: no warning names d/%s: %q", via, name, r.Stderr)
				}
			}
			if l, err := os.Readlink(filepath.Join(out, "d", "in")); err != nil || l != "tool" {
				t.Errorf("via %s: d/in -> %q, %v; want the link inside kept", via, l, err)
			}
		}

		// The sparse tar bomb, made by GNU tar on the node (PAX GNU sparse
		// 1.0, as the issue's), sent by a tar the container put first on
		// its PATH.
		bombDir := t.TempDir()
		f, err := os.Create(filepath.Join(bombDir, "f"))
		if err == nil {
			err = f.Truncate(2 << 30)
			_ = f.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("tar", "--sparse", "--format=posix", "-C", bombDir, "-cf", filepath.Join(root, "bomb.tar"), "f").CombinedOutput(); err != nil {
			t.Fatalf("GNU tar --sparse on the node: %v: %s", err, out)
		}
		bin := filepath.Join(root, "usr", "local", "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, "tar"), []byte("#!/bin/sh\ncat /bomb.tar\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "bomb")
		if err := os.Mkdir(out, 0o755); err != nil {
			t.Fatal(err)
		}
		r := h.crisp(t, "cp", "--way", "tar", ctr+":/d/tool", out+"/")
		if r.ExitCode != 1 || !strings.Contains(r.Stderr, "sparse") {
			t.Fatalf("the sparse bomb: %v; want exit 1 naming the sparse entry", r)
		}
		if names, _ := os.ReadDir(out); len(names) != 0 {
			t.Fatalf("left behind: %v", names)
		}
	})
}
