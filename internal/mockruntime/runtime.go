// Package mockruntime is crisp's loopback CRI runtime: a CRI gRPC server on a
// unix socket whose containers are real host processes, whose pods share the
// host loopback, and whose streaming server (package streamserver) speaks the
// protocol set of a chosen profile. It shares no code with crisp's client
// side: a mock that shared the client's code would share its bugs.
package mockruntime

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
)

// Identity of the mock as Version reports it.
const (
	RuntimeName       = "crisp-mock"
	RuntimeVersion    = "0.1.0"
	RuntimeAPIVersion = "v1"
	// kubeletAPIVersion is the version field of VersionResponse (the
	// kubelet's runtime API version, "0.1.0" for every CRI runtime).
	kubeletAPIVersion = "0.1.0"
)

// Config configures a mock runtime.
type Config struct {
	// Listen is the CRI endpoint, unix:///PATH (the socket is made 0600).
	Listen string
	// Profile selects the streaming protocols (default full).
	Profile streamserver.Profile
	// StreamAddr is the streaming server's loopback address (default 127.0.0.1:0).
	StreamAddr string
	// StreamURLAddr, when set, is the host:port the streaming URLs name
	// instead of StreamAddr (a proxy in front of the streaming server).
	StreamURLAddr string
	// StreamTLS, when set, makes the streaming server speak https/wss (the
	// URLs Exec, Attach and PortForward return are then https).
	StreamTLS *tls.Config
	Faults    []streamserver.Fault
	// StreamCreationTimeout is the streaming server's (zero: 30 s, as
	// containerd and cri-streaming): how long a SPDY exec or attach client
	// may take to open its streams, and so how long a client that went away
	// before opening them holds Close.
	StreamCreationTimeout time.Duration
	// Quirks imitate another runtime's behaviours (zero: none).
	Quirks Quirks
	// Logf receives the mock's own diagnostics; nil discards them.
	Logf func(format string, args ...any)
	// RemoveOrphanPodsAfter, when positive, makes the mock act as a kubelet
	// does on its runtime: every pod created without the kubelet's
	// io.kubernetes.pod.uid label is stopped and removed this long after
	// it was created.
	RemoveOrphanPodsAfter time.Duration
}

// Runtime is a running mock runtime.
type Runtime struct {
	cfg        Config
	socketPath string
	// tmpDir is the runtime's own folder (its "image filesystem"); removed
	// by Close.
	tmpDir string

	images  *imageStore
	procEnv processEnv
	events  *eventHub

	lis    net.Listener
	grpc   *grpc.Server
	stream streamserver.Server

	mu         sync.Mutex
	closing    bool
	pods       map[string]*pod
	containers map[string]*container
	// execs are the exec processes running now, so Close can end them.
	execs map[*hostProc]struct{}

	// wg owns every goroutine the runtime starts (servers, process
	// monitors, output pumps, stdin copiers); Close waits for it.
	wg sync.WaitGroup

	// done is closed when Close begins: attach sessions end.
	done chan struct{}

	closeOnce sync.Once
	closeErr  error
}

// Start serves the CRI API and the streaming server until Close. ctx bounds
// the start-up only; the runtime runs until Close.
func Start(ctx context.Context, cfg Config) (*Runtime, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	socketPath, err := socketPathOf(cfg.Listen)
	if err != nil {
		return nil, err
	}
	if cfg.Profile == "" {
		cfg.Profile = streamserver.ProfileFull
	}
	if cfg.StreamAddr == "" {
		cfg.StreamAddr = "127.0.0.1:0"
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	r := &Runtime{
		cfg:        cfg,
		socketPath: socketPath,
		images:     newImageStore(),
		events:     newEventHub(),
		pods:       map[string]*pod{},
		containers: map[string]*container{},
		execs:      map[*hostProc]struct{}{},
		done:       make(chan struct{}),
	}
	r.tmpDir, err = os.MkdirTemp("", "crisp-mock-")
	if err != nil {
		return nil, fmt.Errorf("mock runtime: create its temporary folder: %w", err)
	}
	r.procEnv = newProcessEnv(cfg.Logf)

	r.stream, err = streamserver.New(streamserver.Config{
		Addr:    cfg.StreamAddr,
		Profile: cfg.Profile,
		Faults:  cfg.Faults,
		TLS:     cfg.StreamTLS,
		URLAddr: cfg.StreamURLAddr,

		StreamCreationTimeout: cfg.StreamCreationTimeout,
	}, &backend{r: r})
	if err == nil {
		if err = r.stream.Start(); err != nil {
			_ = r.stream.Close()
			r.stream = nil
		}
	}
	if err != nil {
		_ = os.RemoveAll(r.tmpDir)
		return nil, fmt.Errorf("mock runtime: start the streaming server on %s (profile %s): %w", cfg.StreamAddr, cfg.Profile, err)
	}

	lis, err := listenUnix(socketPath)
	if err != nil {
		_ = r.stream.Close()
		_ = os.RemoveAll(r.tmpDir)
		return nil, err
	}
	r.lis = lis
	// WaitForHandlers makes Stop wait for running handlers, so no handler
	// goroutine outlives Close.
	r.grpc = grpc.NewServer(grpc.WaitForHandlers(true), grpc.ChainUnaryInterceptor(r.logUnimplemented))
	runtimeapi.RegisterRuntimeServiceServer(r.grpc, &runtimeService{r: r})
	runtimeapi.RegisterImageServiceServer(r.grpc, &imageService{r: r})
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		if err := r.grpc.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			r.cfg.Logf("CRI server on %s stopped: %v", socketPath, err)
		}
	}()
	return r, nil
}

// socketPathOf checks that listen is unix:///PATH and returns PATH.
func socketPathOf(listen string) (string, error) {
	path, ok := strings.CutPrefix(listen, "unix://")
	if !ok || !filepath.IsAbs(path) {
		return "", fmt.Errorf("mock runtime: listen address %q is not unix:///ABSOLUTE/PATH; give e.g. unix:///tmp/crisp-mock.sock", listen)
	}
	// sockaddr_un holds 108 bytes including the terminating NUL.
	if len(path) > 107 {
		return "", fmt.Errorf("mock runtime: socket path %q is %d bytes, longer than the 107 a unix socket allows; pick a shorter folder", path, len(path))
	}
	return path, nil
}

// listenUnix listens on path with mode 0600, replacing a stale socket file
// but never one a live server answers on.
func listenUnix(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("mock runtime: create the socket's folder: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("mock runtime: %s exists and is not a socket; remove it or choose another path", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			_ = c.Close()
			return nil, fmt.Errorf("mock runtime: a server already answers on %s; stop it or choose another path", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("mock runtime: remove the stale socket %s: %w", path, err)
		}
	}
	lis, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("mock runtime: listen on %s: %w", path, err)
	}
	// Go removes the socket file when the listener closes; keep that.
	lis.(*net.UnixListener).SetUnlinkOnClose(true)
	if err := os.Chmod(path, 0o600); err != nil {
		_ = lis.Close()
		return nil, fmt.Errorf("mock runtime: make %s private (0600): %w", path, err)
	}
	return lis, nil
}

// Endpoint is the CRI endpoint (unix:///PATH).
func (r *Runtime) Endpoint() string { return "unix://" + r.socketPath }

// StreamServer gives tests control of the streaming server (stop, restart).
func (r *Runtime) StreamServer() streamserver.Server { return r.stream }

// Close ends every container and exec process, stops both servers and
// removes the socket. It is safe to call more than once.
func (r *Runtime) Close() error {
	r.closeOnce.Do(func() { r.closeErr = r.close() })
	return r.closeErr
}

func (r *Runtime) close() error {
	var errs []error
	r.mu.Lock()
	r.closing = true
	ctrs := make([]*container, 0, len(r.containers))
	for _, c := range r.containers {
		ctrs = append(ctrs, c)
	}
	execs := make([]*hostProc, 0, len(r.execs))
	for p := range r.execs {
		execs = append(execs, p)
	}
	var proxies []*portProxy
	for _, p := range r.pods {
		p.mu.Lock()
		proxies = append(proxies, p.proxies...)
		p.proxies = nil
		p.mu.Unlock()
	}
	r.mu.Unlock()
	// A ready pod's host-port listeners end with the runtime.
	closeProxies(proxies)

	// Processes first: a handler waiting in ExecSync or a stream waiting on
	// a process returns once the process is gone. Attach sessions end on
	// r.done. Then the streaming server cuts its connections, which also
	// frees output pumps blocked on a client that stopped reading; only
	// then can every container's output be drained.
	for _, p := range execs {
		p.kill()
	}
	for _, c := range ctrs {
		c.kill()
	}
	close(r.done)
	if err := r.stream.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close the streaming server: %w", err))
	}
	for _, c := range ctrs {
		c.stop(0)
	}
	r.grpc.Stop()
	r.wg.Wait()
	for _, c := range ctrs {
		c.closeLog()
	}
	if err := os.Remove(r.socketPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, fmt.Errorf("remove the socket: %w", err))
	}
	if err := os.RemoveAll(r.tmpDir); err != nil {
		errs = append(errs, fmt.Errorf("remove %s: %w", r.tmpDir, err))
	}
	if len(errs) > 0 {
		return fmt.Errorf("mock runtime: close: %w", errors.Join(errs...))
	}
	return nil
}

// logUnimplemented reports calls the mock does not serve, so that a client
// failing on one (a newer crictl, a kubelet) is easy to diagnose.
func (r *Runtime) logUnimplemented(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	if status.Code(err) == codes.Unimplemented {
		r.cfg.Logf("%s is not implemented by the mock runtime", info.FullMethod)
	}
	return resp, err
}

// goTracked runs f on a goroutine that Close waits for.
func (r *Runtime) goTracked(f func()) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		f()
	}()
}
