package logs

import (
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// writeRotating writes numbered lines to path as a runtime does, and
// rotates it every perFile lines as the kubelet does: rename to
// <path>.<time>, one more line lands in the old file (the runtime has not
// reopened yet), then the new file.
func writeRotating(path string, rotations, perFile int) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	n := 0
	write := func() error {
		_, err := fmt.Fprintf(f, "2024-01-01T00:00:00.%09dZ stdout F line %d\n", n, n)
		n++
		return err
	}
	for k := 1; k <= rotations; k++ {
		for range perFile {
			if err := write(); err != nil {
				return err
			}
		}
		if err := os.Rename(path, fmt.Sprintf("%s.20240101-%06d", path, k)); err != nil {
			return err
		}
		if err := write(); err != nil {
			return err
		}
		next, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		f = next
	}
	for range perFile {
		if err := write(); err != nil {
			return err
		}
	}
	return f.Close()
}

// A fast writer rotating many times while crisp follows: every line
// arrives once, in order (crisp used to lose the lines written to the old
// file after its last read, and whole rotated files passed over between
// two looks).
func TestFollowManyRotations(t *testing.T) {
	path := logFile(t, "2024-01-01T00:00:00Z stdout F start\n")
	const rotations, perFile = 60, 1000
	var running atomic.Bool
	running.Store(true)
	var out, errOut lockedBuffer
	errc := make(chan error, 1)
	go func() {
		errc <- Read(context.Background(), path, Options{Follow: true, Tail: -1, LimitBytes: -1},
			func(context.Context) (bool, error) { return running.Load(), nil }, &out, &errOut)
	}()
	// The writer starts once crisp has the file open, as following starts
	// from the file the container writes then.
	eventually(t, "the first line", func() bool { return out.String() != "" })
	if err := writeRotating(path, rotations, perFile); err != nil {
		t.Fatal(err)
	}
	running.Store(false)
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Read did not return once the container stopped")
	}
	lines := strings.Split(strings.TrimSuffix(strings.TrimPrefix(out.String(), "start\n"), "\n"), "\n")
	want := rotations*(perFile+1) + perFile
	for i, l := range lines {
		if l != "line "+strconv.Itoa(i) {
			t.Fatalf("line %d is %q (%d lines of %d arrived)", i, l, len(lines), want)
		}
	}
	if len(lines) != want {
		t.Errorf("%d lines of %d arrived", len(lines), want)
	}
	if errOut.String() != "" {
		t.Errorf("warned with nothing lost: %q", errOut.String())
	}
}

// gate blocks the first write until released, so that rotations happen
// "between two looks" deterministically.
type gate struct {
	lockedBuffer
	entered, release chan struct{}
	once             atomic.Bool
}

func (g *gate) Write(p []byte) (int, error) {
	if g.once.CompareAndSwap(false, true) {
		close(g.entered)
		<-g.release
	}
	return g.lockedBuffer.Write(p)
}

// followWhileRotating follows a log that rotates twice while crisp is
// busy writing its first line; between does what else the kubelet does
// to the rotated files (compress, remove) before crisp looks again.
func followWhileRotating(t *testing.T, between func(first, second string)) (stdout, stderr string) {
	t.Helper()
	path := logFile(t, "2024-01-01T00:00:01Z stdout F a1\n")
	var running atomic.Bool
	running.Store(true)
	out := &gate{entered: make(chan struct{}), release: make(chan struct{})}
	var errOut lockedBuffer
	errc := make(chan error, 1)
	go func() {
		errc <- Read(context.Background(), path, Options{Follow: true, Tail: -1, LimitBytes: -1},
			func(context.Context) (bool, error) { return running.Load(), nil }, out, &errOut)
	}()
	<-out.entered
	first, second := path+".20240101-000001", path+".20240101-000002"
	appendTo(t, path, "2024-01-01T00:00:02Z stdout F a2\n")
	if err := os.Rename(path, first); err != nil {
		t.Fatal(err)
	}
	appendTo(t, path, "2024-01-01T00:00:03Z stdout F b1\n")
	if err := os.Rename(path, second); err != nil {
		t.Fatal(err)
	}
	appendTo(t, path, "2024-01-01T00:00:04Z stdout F c1\n")
	between(first, second)
	close(out.release)
	eventually(t, "c1", func() bool { return strings.HasSuffix(out.String(), "c1\n") })
	running.Store(false)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String()
}

func TestFollowReadsCompressedRotatedFile(t *testing.T) {
	stdout, stderr := followWhileRotating(t, func(_, second string) {
		data, err := os.ReadFile(second)
		if err != nil {
			t.Fatal(err)
		}
		gz, err := os.Create(second + ".gz")
		if err != nil {
			t.Fatal(err)
		}
		zw := gzip.NewWriter(gz)
		if _, err := zw.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := gz.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(second); err != nil {
			t.Fatal(err)
		}
	})
	if stdout != "a1\na2\nb1\nc1\n" || stderr != "" {
		t.Errorf("stdout %q stderr %q, want a1 a2 b1 c1 and no warning", stdout, stderr)
	}
}

func TestFollowWarnsOfRemovedRotatedFiles(t *testing.T) {
	stdout, stderr := followWhileRotating(t, func(first, second string) {
		for _, p := range []string{first, second} {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}
	})
	if stdout != "a1\na2\nc1\n" {
		t.Errorf("stdout %q, want a1 a2 c1 (b1 is gone)", stdout)
	}
	if !strings.Contains(stderr, "0.log.20240101-000001 was removed") || !strings.Contains(stderr, "may be lost") {
		t.Errorf("stderr %q, want a warning naming the removed rotated file", stderr)
	}
}

// A file rotated before following started is not read, even when a
// logrotate-style rotation renames it (.1 -> .2) under crisp.
func TestFollowSkipsFilesRotatedBefore(t *testing.T) {
	path := logFile(t, "2024-01-01T00:00:01Z stdout F a1\n")
	appendTo(t, path+".1", "2023-01-01T00:00:00Z stdout F older\n")
	var running atomic.Bool
	running.Store(true)
	out := &gate{entered: make(chan struct{}), release: make(chan struct{})}
	var errOut lockedBuffer
	errc := make(chan error, 1)
	go func() {
		errc <- Read(context.Background(), path, Options{Follow: true, Tail: -1, LimitBytes: -1},
			func(context.Context) (bool, error) { return running.Load(), nil }, out, &errOut)
	}()
	<-out.entered
	for _, mv := range [][2]string{{path + ".1", path + ".2"}, {path, path + ".1"}} {
		if err := os.Rename(mv[0], mv[1]); err != nil {
			t.Fatal(err)
		}
	}
	appendTo(t, path, "2024-01-01T00:00:02Z stdout F c1\n")
	close(out.release)
	eventually(t, "c1", func() bool { return strings.HasSuffix(out.String(), "c1\n") })
	running.Store(false)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if out.String() != "a1\nc1\n" || errOut.String() != "" {
		t.Errorf("stdout %q stderr %q, want a1 c1 and no warning", out.String(), errOut.String())
	}
}
