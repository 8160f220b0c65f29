package testkit

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { os.Exit(LeakChecked{M: m, Grace: LeakGrace}.Run()) }

func TestPoll(t *testing.T) {
	var n atomic.Int32
	if !Poll(time.Minute, func() bool { return n.Add(1) == 3 }) {
		t.Fatal("Poll gave up on a condition that came true")
	}
	if got := n.Load(); got != 3 {
		t.Errorf("Poll checked %d times, want 3 (it stops once true)", got)
	}
	if Poll(0, func() bool { return false }) {
		t.Error("Poll reported a condition that never came true")
	}
}

func TestLockedBuffer(t *testing.T) {
	var b LockedBuffer
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = fmt.Fprintf(&b, "%d", i%10)
		}()
	}
	wg.Wait()
	if b.Len() != 10 || len(b.String()) != 10 {
		t.Errorf("buffer %q, want 10 bytes", b.String())
	}
}

func TestEcho(t *testing.T) {
	port := Echo(t)
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	if _, err := conn.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(conn)
	if err != nil || string(got) != "ping" {
		t.Errorf("echo answered %q, %v; want \"ping\" then EOF", got, err)
	}
}

// A connection left open is closed by stop, which waits for its goroutine.
func TestServeEchoStopClosesOpenConnections(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := ServeEcho(lis)
	conn, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	if _, err := conn.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(conn, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	stop()
	if _, err := conn.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("read after stop: %v, want EOF", err)
	}
}

// FindLeaks waits out a goroutine that ends within the grace period, and
// reports one that does not.
func TestFindLeaks(t *testing.T) {
	before := goleak.IgnoreCurrent()
	done := make(chan struct{})
	go func() {
		time.Sleep(50 * time.Millisecond) // a goroutine that ends by itself, a moment late
		close(done)
	}()
	if err := FindLeaks(LeakGrace, before); err != nil {
		t.Errorf("FindLeaks reported a goroutine that ended within the grace period: %v", err)
	}
	<-done
	block := make(chan struct{})
	go func() { <-block }()
	err := FindLeaks(0, before)
	close(block)
	if err == nil {
		t.Error("FindLeaks missed a goroutine still running")
	}
}

// TryLockFile gives up at once where LockFile would wait, and takes the lock
// once its holder let go.
func TestTryLockFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := LockFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := TryLockFile(path); ok || err != nil {
		t.Fatalf("TryLockFile while held: ok %v, err %v; want false, nil", ok, err)
	}
	unlock()
	again, ok, err := TryLockFile(path)
	if !ok || err != nil {
		t.Fatalf("TryLockFile once released: ok %v, err %v; want true, nil", ok, err)
	}
	again()
	if _, _, err := TryLockFile(filepath.Join(t.TempDir(), "no", "such", "dir")); err == nil {
		t.Fatal("TryLockFile in a missing folder: no error")
	}
}

// TestSocketDir: a folder short enough for a socket, gone after the test.
func TestSocketDir(t *testing.T) {
	var dir string
	t.Run("use", func(t *testing.T) {
		dir = SocketDir(t)
		sock := filepath.Join(dir, "a-socket-name-of-some-length.sock")
		if len(sock) > 100 {
			t.Fatalf("%s: %d bytes, too long for a unix socket", sock, len(sock))
		}
		l, err := net.Listen("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.Close() })
	})
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s after the test: %v, want it removed", dir, err)
	}
}
