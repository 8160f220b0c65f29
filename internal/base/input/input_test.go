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

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "pod.json")
	if err := os.WriteFile(small, []byte(`{"metadata":{"name":"p"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := ReadFile(context.Background(), small, 100)
	if err != nil || string(data) != `{"metadata":{"name":"p"}}` {
		t.Fatalf("ReadFile = %q, %v", data, err)
	}
	var tooLarge *TooLargeError
	if _, err := ReadFile(context.Background(), small, 10); !errors.As(err, &tooLarge) || tooLarge.Limit != 10 {
		t.Errorf("ReadFile past the limit: %v; want a *TooLargeError of 10 bytes", err)
	}
	// An endless device stops at the limit instead of filling memory.
	if _, err := ReadFile(context.Background(), "/dev/zero", 1<<20); !errors.As(err, &tooLarge) || !strings.Contains(err.Error(), "/dev/zero is larger than 1 MiB") {
		t.Errorf("ReadFile(/dev/zero) = %v; want it cut at 1 MiB", err)
	}
	if _, err := ReadFile(context.Background(), dir, 100); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("ReadFile(a directory) = %v", err)
	}
	if _, err := ReadFile(context.Background(), filepath.Join(dir, "none"), 100); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile(missing) = %v; want ErrNotExist", err)
	}
}

// TestReadFileFIFOInterrupted: a FIFO nobody writes to blocks open(2); the
// command's context ending (a signal) must end the wait at once.
func TestReadFileFIFOInterrupted(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, writer := range []bool{false, true} {
		ctx, cancel := context.WithCancelCause(context.Background())
		var w *os.File
		if writer {
			// A writer that never writes: open succeeds, the read waits.
			var err error
			if w, err = os.OpenFile(fifo, os.O_RDWR, 0); err != nil {
				t.Fatal(err)
			}
		}
		sig := errors.New("interrupt")
		time.AfterFunc(50*time.Millisecond, func() { cancel(sig) })
		_, err := ReadFile(ctx, fifo, 100)
		if !errors.Is(err, sig) {
			t.Errorf("writer=%v: ReadFile of a silent FIFO = %v; want the context's cause", writer, err)
		}
		if w != nil {
			_ = w.Close()
		} else {
			// Let the open left behind finish, so no goroutine outlives the test.
			if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				_ = w.Close()
			}
		}
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

func TestReadLine(t *testing.T) {
	for in, want := range map[string]string{"secret\nrest": "secret", "secret\r\n": "secret", "secret": "secret", "": "", "\n": ""} {
		got, err := ReadLine(context.Background(), strings.NewReader(in), "stdin", 6)
		if err != nil || got != want {
			t.Errorf("ReadLine(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	var tooLarge *TooLargeError
	for _, r := range []io.Reader{strings.NewReader("secrets\n"), endless{}} {
		if _, err := ReadLine(context.Background(), r, "the password", 6); !errors.As(err, &tooLarge) || !strings.Contains(err.Error(), "the password is larger than 6 bytes") {
			t.Errorf("ReadLine past the limit = %v", err)
		}
	}
	pr, pw := io.Pipe()
	defer func() { _ = pw.Close() }()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := ReadLine(ctx, pr, "stdin", 10); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadLine of a silent pipe = %v; want context.Canceled", err)
	}
	_ = pr.CloseWithError(io.EOF) // ends the read left behind
}
