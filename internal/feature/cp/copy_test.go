package cp

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/session"
	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

func TestMain(m *testing.M) { os.Exit(testkit.LeakChecked{M: m, Grace: testkit.LeakGrace}.Run()) }

func testJob(errOut io.Writer) *job {
	return &job{deps: session.Deps{Streams: cmdutil.IOStreams{ErrOut: errOut}}, c: Copy{Request: Request{Container: "web"}}}
}

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		src, dst string
		want     Request
		bad      string
	}{
		{src: "web:/etc/hosts", dst: ".", want: Request{Container: "web", Remote: "/etc/hosts", Local: "."}},
		{src: "./site", dst: "3f2a:/srv/", want: Request{Container: "3f2a", Remote: "/srv/", Local: "./site", In: true}},
		{src: "./a:b", dst: "web:/tmp", want: Request{Container: "web", Remote: "/tmp", Local: "./a:b", In: true}},
		{src: "/tmp/x:y", dst: "web:/tmp", want: Request{Container: "web", Remote: "/tmp", Local: "/tmp/x:y", In: true}},
		{src: "a", dst: "b", bad: "neither"},
		{src: "a:/x", dst: "b:/y", bad: "both"},
		{src: ":/x", dst: ".", bad: "names no container"},
		{src: "web:", dst: ".", bad: "a path is empty"},
		{src: "web:/x", dst: "", bad: "a path is empty"},
		{src: "web:etc/hosts", dst: ".", bad: "must be absolute"},
		{src: "web:/", dst: ".", bad: "whole root"},
		{src: "/", dst: "web:/x", bad: "no name"},
	} {
		got, err := ParseArgs(tc.src, tc.dst)
		if tc.bad != "" {
			if !cmdutil.IsUsage(err) || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("%q %q: got %v, want a usage error with %q", tc.src, tc.dst, err, tc.bad)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q %q: got %+v, %v; want %+v", tc.src, tc.dst, got, err, tc.want)
		}
	}
}

// A copy cut half-way (the producer fails: a stream that broke, a tar that
// died) leaves nothing: not the stage, not the destination.
func TestCutCopyLeavesNothing(t *testing.T) {
	dest := t.TempDir()
	d, err := OpenBeneath(dest)
	must(t, err)
	defer func() { _ = d.Close() }()
	var stderr bytes.Buffer
	cut := errors.New("stream cut")
	err = testJob(&stderr).unpackInto(context.Background(), d, "", "tree", noCount{}, func(w io.Writer) error {
		tw := tar.NewWriter(w)
		must(t, tw.WriteHeader(&tar.Header{Name: "tree/", Typeflag: tar.TypeDir, Mode: 0o755}))
		must(t, tw.WriteHeader(&tar.Header{Name: "tree/f", Typeflag: tar.TypeReg, Mode: 0o644, Size: 1 << 20}))
		_, _ = tw.Write(make([]byte, 1<<19))
		return cut
	})
	if !errors.Is(err, cut) {
		t.Fatalf("got %v, want the producer's error", err)
	}
	if names, _ := os.ReadDir(dest); len(names) != 0 {
		t.Fatalf("left behind: %v", names)
	}
}

// A full disk: a clear error naming the cause, and nothing left (a small
// tmpfs, so it needs root to mount).
func TestDiskFullLeavesNothing(t *testing.T) {
	testkit.RequireRoot(t, "mounting a small tmpfs")
	dest := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "crisp-cp-test", dest).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = unix.Unmount(dest, unix.MNT_DETACH) })
	d, err := OpenBeneath(dest)
	must(t, err)
	defer func() { _ = d.Close() }()
	j := testJob(io.Discard)
	err = j.unpackInto(context.Background(), d, "", "big.bin", noCount{}, func(w io.Writer) error {
		tw := tar.NewWriter(w)
		if err := tw.WriteHeader(&tar.Header{Name: "big.bin", Typeflag: tar.TypeReg, Mode: 0o644, Size: 4 << 20}); err != nil {
			return err
		}
		if _, err := io.CopyN(tw, rand.Reader, 4<<20); err != nil {
			return err
		}
		return tw.Close()
	})
	if !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("got %v, want ENOSPC", err)
	}
	if msg := j.explain(err).Error(); !strings.Contains(msg, "no space left on the device: nothing was left behind") {
		t.Fatalf("unclear message: %s", msg)
	}
	if names, _ := os.ReadDir(dest); len(names) != 0 {
		t.Fatalf("left behind: %v", names)
	}
}

func TestLocalRoundTripKeepsModesLinksAndContent(t *testing.T) {
	src := filepath.Join(t.TempDir(), "tree")
	must(t, os.MkdirAll(filepath.Join(src, "sub"), 0o750))
	must(t, os.WriteFile(filepath.Join(src, "sub", "run.sh"), []byte("#!/bin/sh\n"), 0o755))
	must(t, os.Chmod(filepath.Join(src, "sub", "run.sh"), 0o755|os.ModeSetuid))
	must(t, os.Symlink("sub/run.sh", filepath.Join(src, "link")))
	must(t, os.Link(filepath.Join(src, "sub", "run.sh"), filepath.Join(src, "hard")))
	must(t, os.Chmod(filepath.Join(src, "sub"), 0o550)) // read-only directory
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(src, "sub"), 0o750) })
	dest := t.TempDir()
	copyLocal(t, src, dest, "copy")
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(dest, "copy", "sub"), 0o750) })
	st, err := os.Stat(filepath.Join(dest, "copy", "sub", "run.sh"))
	must(t, err)
	if st.Mode()&(os.ModePerm|os.ModeSetuid) != 0o755|os.ModeSetuid {
		t.Errorf("run.sh mode %v", st.Mode())
	}
	if st, _ := os.Stat(filepath.Join(dest, "copy", "sub")); st.Mode().Perm() != 0o550 {
		t.Errorf("sub mode %v", st.Mode())
	}
	if l, _ := os.Readlink(filepath.Join(dest, "copy", "link")); l != "sub/run.sh" {
		t.Errorf("link -> %q", l)
	}
	a, _ := os.Stat(filepath.Join(dest, "copy", "hard"))
	if !os.SameFile(a, st) {
		t.Error("the hard link was not kept")
	}
}

// copyLocal copies src into dest/final as a copy through a root would,
// modes kept (--preserve-mode).
func copyLocal(tb testing.TB, src, dest, final string) {
	tb.Helper()
	ls, err := OpenBeneath(filepath.Dir(src))
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = ls.Close() }()
	ld, err := OpenBeneath(dest)
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = ld.Close() }()
	j := testJob(io.Discard)
	j.c.KeepModes = true
	err = j.unpackInto(context.Background(), ld, "", final, noCount{}, func(w io.Writer) error {
		tw := tar.NewWriter(w)
		if err := Pack(ls, filepath.Base(src), filepath.Base(src), tw, noCount{}, func(string) {}); err != nil {
			return err
		}
		return tw.Close()
	})
	if err != nil {
		tb.Fatal(err)
	}
}

func TestProgressDrawsOnlyForLargeCopies(t *testing.T) {
	var out bytes.Buffer
	now := time.Unix(0, 0)
	clock := func() time.Time { now = now.Add(time.Second); return now }
	small := NewProgress(&out, "crisp cp", 1<<20, clock)
	small.Add(1 << 20)
	small.Finish()
	if out.Len() != 0 {
		t.Fatalf("a small copy drew %q", out.String())
	}
	big := NewProgress(&out, "crisp cp", 64<<20, clock)
	for range 64 {
		big.Add(1 << 20)
	}
	big.Finish()
	last := out.String()[strings.LastIndex(out.String(), "\r"):]
	if !strings.Contains(last, "100%") || !strings.Contains(last, "64.0 MiB / 64.0 MiB") || !strings.HasSuffix(last, "\n") {
		t.Fatalf("final bar %q", last)
	}
	var nilBar *Progress
	nilBar.Add(1) // no terminal: counts nothing, draws nothing
	nilBar.Finish()
}

// An interrupted copy (ctx cancelled, as by SIGINT) stops and leaves nothing.
func TestInterruptedCopyLeavesNothing(t *testing.T) {
	dest := t.TempDir()
	d, err := OpenBeneath(dest)
	must(t, err)
	defer func() { _ = d.Close() }()
	ctx, cancel := context.WithCancel(context.Background())
	err = testJob(io.Discard).unpackInto(ctx, d, "", "big.bin", noCount{}, func(w io.Writer) error {
		tw := tar.NewWriter(w)
		if err := tw.WriteHeader(&tar.Header{Name: "big.bin", Typeflag: tar.TypeReg, Mode: 0o644, Size: 64 << 20}); err != nil {
			return err
		}
		if _, err := tw.Write(make([]byte, 1<<20)); err != nil {
			return err
		}
		cancel() // the signal arrives mid-copy
		_, err := tw.Write(make([]byte, 63<<20))
		return err
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want the cancellation", err)
	}
	if names, _ := os.ReadDir(dest); len(names) != 0 {
		t.Fatalf("left behind: %v", names)
	}
}
