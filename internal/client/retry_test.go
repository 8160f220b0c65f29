package client

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client/clienttest"
	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// lateRuntime is a runtime whose socket appears when the client says, on
// its debug output, that a connection attempt failed: the moment a
// runtime that was starting would come up, without a clock in the test.
type lateRuntime struct {
	t        *testing.T
	sock     string
	mu       sync.Mutex
	debug    strings.Builder
	srv      *grpc.Server
	done     chan struct{}
	attempts int
}

func newLateRuntime(t *testing.T) *lateRuntime {
	l := &lateRuntime{t: t, sock: filepath.Join(testkit.SocketDir(t), "cri.sock")}
	t.Cleanup(func() {
		if l.srv != nil {
			l.srv.Stop()
			<-l.done
		}
	})
	return l
}

// Write takes the client's debug output; the first failed attempt starts
// the runtime.
func (l *lateRuntime) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.debug.Write(p)
	if !strings.HasPrefix(string(p), "connection attempt ") {
		return len(p), nil
	}
	l.attempts++
	if l.srv == nil {
		lis, err := net.Listen("unix", l.sock)
		if err != nil {
			l.t.Error(err)
			return len(p), nil
		}
		l.srv, l.done = grpc.NewServer(), make(chan struct{})
		runtimeapi.RegisterRuntimeServiceServer(l.srv, &clienttest.Fake{})
		go func() {
			defer close(l.done)
			_ = l.srv.Serve(lis)
		}()
	}
	return len(p), nil
}

func (l *lateRuntime) version(t *testing.T, maxRetries int) error {
	t.Helper()
	c, err := Dial(Settings{RuntimeEndpoint: "unix://" + l.sock, RequestTimeout: time.Minute, MaxRetries: maxRetries, DebugOut: l})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	return c.Call(context.Background(), "version", func(ctx context.Context) error {
		_, err := c.Runtime.Version(ctx, &runtimeapi.VersionRequest{})
		return err
	})
}

// TestMaxRetriesWaitsForALateSocket: crictl's --max-retries, a socket that
// is not there at the first attempt is tried again, and the call goes
// through once the runtime is up.
func TestMaxRetriesWaitsForALateSocket(t *testing.T) {
	l := newLateRuntime(t)
	if err := l.version(t, 3); err != nil {
		t.Fatalf("version with retries: %v\ndebug output:\n%s", err, l.debug.String())
	}
	if l.attempts == 0 {
		t.Fatal("the call went through at the first attempt; the socket was not missing")
	}
	if !strings.Contains(l.debug.String(), "connection attempt 1/3 to unix://"+l.sock+" failed: ") {
		t.Errorf("-D does not say the attempt failed:\n%s", l.debug.String())
	}
}

// TestMaxRetriesZeroFailsAtOnce: --max-retries 0, crictl's "disable".
func TestMaxRetriesZeroFailsAtOnce(t *testing.T) {
	l := newLateRuntime(t)
	err := l.version(t, 0)
	if err == nil || !strings.Contains(err.Error(), "is unreachable") {
		t.Fatalf("version without retries: %v, want the endpoint unreachable", err)
	}
	if l.attempts != 0 {
		t.Errorf("%d retries with --max-retries 0", l.attempts)
	}
}

// TestMaxRetriesGivesUp: retries that never reach the endpoint end with
// the endpoint's error, after exactly max-retries more attempts.
func TestMaxRetriesGivesUp(t *testing.T) {
	dir := t.TempDir()
	var debug strings.Builder
	c, err := Dial(Settings{RuntimeEndpoint: "unix://" + filepath.Join(dir, "never.sock"), RequestTimeout: time.Minute, MaxRetries: 1, DebugOut: &debug})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	err = c.Call(context.Background(), "version", func(ctx context.Context) error {
		_, err := c.Runtime.Version(ctx, &runtimeapi.VersionRequest{})
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "is unreachable") {
		t.Fatalf("version: %v, want the endpoint unreachable", err)
	}
	if n := strings.Count(debug.String(), "connection attempt "); n != 1 {
		t.Errorf("%d retries with --max-retries 1:\n%s", n, debug.String())
	}
}

func TestResolveMaxRetries(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "crictl.yaml")
	if err := os.WriteFile(cfg, []byte("runtime-endpoint: unix:///x.sock\nmax-retries: 7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	none := func(string) string { return "" }
	two := 2
	for _, tc := range []struct {
		name string
		src  Sources
		want int
	}{
		{"default", Sources{FlagEndpoint: "unix:///x.sock", DefaultConfig: filepath.Join(dir, "absent.yaml"), Getenv: none}, DefaultMaxRetries},
		{"file", Sources{FlagConfig: cfg, Getenv: none}, 7},
		{"flag over file", Sources{FlagConfig: cfg, FlagMaxRetries: &two, Getenv: none}, 2},
		{"usual socket: never", Sources{DefaultConfig: filepath.Join(dir, "absent.yaml"), Getenv: none,
			Defaults: []string{"unix:///y.sock"}, SocketExists: func(string) bool { return true }}, 0},
	} {
		s, err := Resolve(tc.src)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if s.MaxRetries != tc.want {
			t.Errorf("%s: MaxRetries %d, want %d", tc.name, s.MaxRetries, tc.want)
		}
	}
}
