package input

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A FIFO nobody opens for writing blocks open(2); a FIFO whose writer never
// writes blocks read(2). Either wait ends with the context's cause when the
// context ends, and nothing is left running (goleak, TestMain).
func TestOpenFIFOInterrupted(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	sig := errors.New("interrupt")

	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(50*time.Millisecond, func() { cancel(sig) })
	if f, err := Open(ctx, fifo); !errors.Is(err, sig) {
		if f != nil {
			_ = f.Close()
		}
		t.Fatalf("Open of a FIFO with no writer = %v; want the context's cause", err)
	}

	w, err := os.OpenFile(fifo, os.O_RDWR, 0) // a writer that never writes
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Close() }()
	ctx, cancel = context.WithCancelCause(context.Background())
	f, err := Open(ctx, fifo)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(50*time.Millisecond, func() { cancel(sig) })
	if _, err := io.ReadAll(f); !errors.Is(err, sig) {
		t.Errorf("a read of a silent FIFO = %v; want the context's cause", err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("Close after the interruption = %v", err)
	}
}

// Open reads files and FIFOs with writers like os.Open does, and says what
// is wrong with a path it cannot read.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace.jsonl")
	if err := os.WriteFile(path, []byte("line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	if err != nil || string(got) != "line\n" {
		t.Errorf("ReadAll = %q, %v", got, err)
	}
	if err := f.Close(); err != nil {
		t.Error(err)
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	wrote := make(chan error, 1)
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			_, err = w.Write([]byte("from a writer\n"))
			_ = w.Close()
		}
		wrote <- err
	}()
	f, err = Open(context.Background(), fifo)
	if err != nil {
		t.Fatal(err)
	}
	got, err = io.ReadAll(f)
	if err != nil || string(got) != "from a writer\n" {
		t.Errorf("ReadAll(FIFO) = %q, %v", got, err)
	}
	_ = f.Close()
	if err := <-wrote; err != nil {
		t.Error(err)
	}

	if _, err := Open(context.Background(), dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("Open(a directory) = %v", err)
	}
	if _, err := Open(context.Background(), filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open(missing) = %v; want ErrNotExist", err)
	}
}

// Reader passes a stream through, and a read waiting on a silent one ends
// with the context's cause when the context ends.
func TestReader(t *testing.T) {
	got, err := io.ReadAll(Reader(context.Background(), strings.NewReader("report\n")))
	if err != nil || string(got) != "report\n" {
		t.Errorf("ReadAll = %q, %v", got, err)
	}
	pr, pw := io.Pipe()
	sig := errors.New("interrupt")
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(50*time.Millisecond, func() { cancel(sig) })
	if _, err := io.ReadAll(Reader(ctx, pr)); !errors.Is(err, sig) {
		t.Errorf("a read of a silent pipe = %v; want the context's cause", err)
	}
	_ = pw.Close() // ends the read left behind
}
