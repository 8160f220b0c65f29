package containerd

// crisp cp against a hostile container on the real runtimes: the container
// swaps a name between a regular file, a FIFO, a symlink out and a device
// while the node copies through its root, again and again.

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// swapper is testdata/swapper, the container's side of the race, mounted
// into a busybox container.
var swapper = testkit.GoBinary{Pkg: "./internal/e2e/containerd/testdata/swapper", Static: true}

const swapperPath = "/crisp-swapper"

// hostileSetup prepares the container's side, then swaps: /r/x/f is in
// turn a hard link of the regular file, of a FIFO, of a symlink to
// /etc/shadow and of the device node the test plants (/r/alt/dev).
// /r/ready says it is set up; /r/big is for the interrupted copy.
const hostileSetup = `set -e
mkdir -p /r/x /r/alt
i=0; while [ $i -lt 300 ]; do echo "the regular file's own bytes"; i=$((i+1)); done > /r/alt/reg
mkfifo /r/alt/fifo
ln -s /etc/shadow /r/alt/sym
ln /r/alt/reg /r/x/f
dd if=/dev/zero of=/r/big bs=1M count=256 2>/dev/null
touch /r/ready
exec ` + swapperPath + ` /r/alt /r/x/f reg fifo reg sym reg dev`

// hostileCopies is how many times the node copies /r/x while the container
// swaps: a few seconds of copies.
const hostileCopies = 20

// hangGuard is how long one copy of a few KiB may take before it counts as
// blocked (the old walk blocked in open(2) on the FIFO until killed).
const hangGuard = 60 * time.Second

// `crisp cp --way root C:/r/x out/` against the swapper: every copy ends
// (none blocks on the FIFO), exits 0, and out/x/f is the regular file's
// bytes or absent with a warning naming it: never a device's content, never
// the link to /etc/shadow. A copy interrupted by SIGINT exits 130 and leaves
// no staged copy.
func TestCpRootAgainstASwappingContainer(t *testing.T) {
	t.Cleanup(swapper.Remove) // after every runtime's subtest
	eachRuntime(t, func(t *testing.T, h *Harness) {
		ctr := h.newContainer(t, ContainerSpec{
			Name:    "swapper",
			Command: []string{"sh", "-c", hostileSetup},
			Mounts:  []Mount{{HostPath: swapper.Path(t), ContainerPath: swapperPath}},
		})
		root := "/proc/" + strconv.Itoa(containerPID(t, h, ctr)) + "/root"
		waitFor(t, filepath.Join(root, "r", "ready"))
		// The device the container links in: /dev/null's numbers, made from
		// the node (CRI-O grants no CAP_MKNOD; a hard link needs none).
		if err := unix.Mknod(filepath.Join(root, "r", "alt", "dev"), unix.S_IFCHR|0o644, int(unix.Mkdev(1, 3))); err != nil {
			t.Fatalf("mknod in the container's root: %v", err)
		}
		want, err := os.ReadFile(filepath.Join(root, "r", "alt", "reg"))
		if err != nil {
			t.Fatal(err)
		}
		out := t.TempDir()
		seen := map[string]int{}
		start := time.Now()
		for i := range hostileCopies {
			dst := filepath.Join(out, strconv.Itoa(i))
			if err := os.Mkdir(dst, 0o755); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			r := run(h.crispCmd(t, ctx, "cp", "--way", "root", ctr+":/r/x", dst+"/"), nil)
			blocked := ctx.Err() != nil
			cancel()
			if blocked {
				t.Fatalf("copy %d did not end within %v: it blocked (%v)", i, hangGuard, r)
			}
			if r.ExitCode != 0 {
				t.Fatalf("copy %d: %v", i, r)
			}
			f := filepath.Join(dst, "x", "f")
			st, err := os.Lstat(f)
			switch {
			case os.IsNotExist(err):
				if !strings.Contains(r.Stderr, "skipping /r/x/f: ") && !strings.Contains(r.Stderr, "skipping x/f: a symlink to /etc/shadow") {
					t.Fatalf("copy %d: x/f left out without a warning naming it: %v", i, r)
				}
				seen["skipped"]++
			case err == nil && st.Mode().IsRegular():
				got, _ := os.ReadFile(f)
				if !bytes.Equal(got, want) {
					t.Fatalf("copy %d: x/f holds %d bytes (%.40q), not the regular file's %d", i, len(got), got, len(want))
				}
				seen["regular"]++
			default:
				t.Fatalf("copy %d: x/f is %v (%v)", i, st.Mode(), err)
			}
		}
		t.Logf("%d copies: %v (%v)", hostileCopies, seen, time.Since(start))

		// SIGINT in the middle of a copy (256 MiB): exit 130, nothing staged.
		dst := filepath.Join(out, "int")
		if err := os.Mkdir(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		cmd := h.crispCmd(t, ctx, "cp", "--way", "root", ctr+":/r/big", dst+"/")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ended := make(chan struct{})
		go func() { _ = cmd.Wait(); close(ended) }()
		staged := waitForStage(dst, ended)
		_ = cmd.Process.Signal(syscall.SIGINT)
		<-ended
		if ctx.Err() != nil {
			t.Fatalf("crisp did not stop on SIGINT within %v", hangGuard)
		}
		if staged {
			if code := cmd.ProcessState.ExitCode(); code != 130 {
				t.Errorf("interrupted copy: exit %d, want 130; stderr %q", code, stderr.String())
			}
		} else {
			t.Log("the copy ended before a staged copy was seen; SIGINT came after it")
		}
		if names, _ := os.ReadDir(dst); len(names) != 0 && staged {
			t.Fatalf("left behind after SIGINT: %v", names)
		}
	})
}

// waitForStage polls dir until a staged copy appears or the copy ended.
func waitForStage(dir string, ended <-chan struct{}) bool {
	for {
		if names, _ := os.ReadDir(dir); len(names) > 0 && strings.HasPrefix(names[0].Name(), ".crisp-cp-") {
			return true
		}
		select {
		case <-ended:
			return false
		case <-time.After(time.Millisecond):
		}
	}
}

// containerPID is the container's process on the node, as the runtime's
// verbose status gives it.
func containerPID(t *testing.T, h *Harness, id string) int {
	t.Helper()
	r := h.crictl(t, "inspect", "-o", "go-template", "--template", "{{.info.pid}}", id)
	pid, err := strconv.Atoi(strings.TrimSpace(r.Stdout))
	if r.ExitCode != 0 || err != nil || pid <= 0 {
		t.Fatalf("the container's PID: %v", r)
	}
	return pid
}

// waitFor waits until name exists (the container has set itself up).
func waitFor(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(hangGuard)
	for {
		if _, err := os.Stat(name); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear within %v", name, hangGuard)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
