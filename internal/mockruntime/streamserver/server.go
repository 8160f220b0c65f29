package streamserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"
	"k8s.io/klog/v2"
)

const (
	defaultAddr                  = "127.0.0.1:0"
	defaultStreamIdleTimeout     = 4 * time.Hour // containerd's default
	defaultStreamCreationTimeout = remotecommandserver.DefaultStreamCreationTimeout
)

// server implements Server.
type server struct {
	profile Profile
	backend Backend
	faults  faultSet
	tls     *tls.Config
	idle    time.Duration
	create  time.Duration
	tokens  *tokenCache
	proto   protocolHandler // the profile's protocol set

	forwarded atomic.Int64 // forwarded port-forward connections, for reset-forward-conn

	mu        sync.Mutex
	addr      string // the resolved listen address, fixed by the first Start
	urlAddr   string // Config.URLAddr: what URLs name, when not addr
	scheme    string
	closed    bool
	killArmed bool
	restart   restartOnce // restart.go
	current   *generation // nil while stopped

	// wg counts every goroutine the server owns: the accept loop, request
	// handlers and backend calls. Add happens under mu while !closed, so
	// Close can Wait without racing an Add.
	wg sync.WaitGroup
}

// protocolHandler serves the upgrade requests of one profile. sess is the
// consumed token's request and the connection it arrived on.
type protocolHandler interface {
	serve(w http.ResponseWriter, r *http.Request, sess *session)
}

// generation is one life of the listener, from Start to Stop.
type generation struct {
	ctx    context.Context // cancelled by Stop: requests and backend calls derive from it
	cancel context.CancelFunc
	ln     net.Listener
	srv    *http.Server
	kill   *time.Timer

	mu      sync.Mutex
	stopped bool
	conns   map[*trackedConn]struct{}
}

func newServer(cfg Config, backend Backend) (*server, error) {
	if backend == nil {
		return nil, errors.New("streamserver: nil Backend")
	}
	profile := cfg.Profile
	if profile == "" {
		profile = ProfileFull
	}
	faults, err := newFaultSet(cfg.Faults)
	if err != nil {
		return nil, fmt.Errorf("streamserver: %w", err)
	}
	addr := cfg.Addr
	if addr == "" {
		addr = defaultAddr
	}
	addr, err = loopbackAddr(addr)
	if err != nil {
		return nil, fmt.Errorf("streamserver: %w", err)
	}
	if cfg.URLAddr != "" {
		if _, _, err := net.SplitHostPort(cfg.URLAddr); err != nil {
			return nil, fmt.Errorf("streamserver: URL address %q: %w", cfg.URLAddr, err)
		}
	}
	s := &server{
		urlAddr: cfg.URLAddr,
		profile: profile,
		backend: backend,
		faults:  faults,
		idle:    cfg.StreamIdleTimeout,
		create:  cfg.StreamCreationTimeout,
		tokens:  newTokenCache(),
		addr:    addr,
		scheme:  "http",
	}
	if s.idle <= 0 {
		s.idle = defaultStreamIdleTimeout
	}
	if s.create <= 0 {
		s.create = defaultStreamCreationTimeout
	}
	if cfg.TLS != nil {
		s.tls = cfg.TLS.Clone()
		// Upgrades need HTTP/1.1: never offer h2.
		s.tls.NextProtos = []string{"http/1.1"}
		s.scheme = "https"
	}
	switch profile {
	case ProfileCRIStreaming:
		s.proto, err = newCRIStreamingHandler(s)
		if err != nil {
			return nil, err
		}
	case ProfileFull, ProfileConmonRS, ProfileLegacy:
		s.proto = newOwnHandler(s, profile)
	default:
		return nil, fmt.Errorf("streamserver: unknown profile %q (profiles: %s)", cfg.Profile, profileNames())
	}
	return s, nil
}

func profileNames() string {
	names := make([]string, len(Profiles))
	for i, p := range Profiles {
		names[i] = string(p)
	}
	return strings.Join(names, ", ")
}

// loopbackAddr checks that addr is host:port on a loopback address and
// returns it with "localhost" spelled 127.0.0.1.
func loopbackAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("listen address %q: %w", addr, err)
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return "", fmt.Errorf("listen address %q is not a loopback address: the mock's streaming server listens on 127.0.0.1 (or ::1) only", addr)
	}
	return net.JoinHostPort(host, port), nil
}

// ---- Server interface ----

func (s *server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

func (s *server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("streamserver: Start after Close")
	}
	if s.current != nil {
		return nil // already serving
	}
	raw, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("streamserver: listen on %s: %w", s.addr, err)
	}
	s.addr = raw.Addr().String()
	g := &generation{conns: map[*trackedConn]struct{}{}}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	g.ln = &trackedListener{Listener: raw, gen: g, refuse: s.refuseConn}
	if s.tls != nil {
		g.ln = tls.NewListener(g.ln, s.tls)
	}
	g.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 30 * time.Second,
		// The streaming libraries log through the request's klog logger
		// (wsstream: "Error on socket receive ... use of closed network
		// connection" whenever a session ends); the mock's library noise
		// stays out of its host's output. The zero logger discards.
		BaseContext: func(net.Listener) context.Context { return klog.NewContext(g.ctx, klog.Logger{}) },
		ConnContext: connContext,
		ErrorLog:    log.New(io.Discard, "", 0),
	}
	s.current = g
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = g.srv.Serve(g.ln) // returns when Stop closes the listener
	}()
	// kill-stream-server-after is one crash, timed from the first Start; a
	// later Start (a test restarting the "runtime") is not killed again.
	if s.faults.killAfter >= 0 && !s.killArmed {
		s.killArmed = true
		g.kill = time.AfterFunc(s.faults.killAfter, func() { s.stopGeneration(g) })
	}
	return nil
}

func (s *server) Stop() error {
	s.mu.Lock()
	g := s.current
	s.mu.Unlock()
	if g == nil {
		return nil
	}
	s.stopGeneration(g)
	return nil
}

// stopGeneration ends g if it is still the current generation: the
// listener closes, every connection (hijacked or not) is cut, and every
// request context and backend call is cancelled.
func (s *server) stopGeneration(g *generation) {
	s.mu.Lock()
	if s.current != g {
		s.mu.Unlock()
		return
	}
	s.current = nil
	s.mu.Unlock()

	if g.kill != nil {
		g.kill.Stop()
	}
	// Connections first, contexts after: a killed runtime writes no final
	// status, so nothing may reach a client once its connection is cut.
	// The listener first, so that no client meets a live port after its
	// session was cut; then every connection is aborted before net/http
	// closes the ones it still owns, so that none lingers.
	_ = g.ln.Close()
	g.mu.Lock()
	g.stopped = true
	conns := make([]*trackedConn, 0, len(g.conns))
	for c := range g.conns {
		conns = append(conns, c)
	}
	g.mu.Unlock()
	for _, c := range conns {
		_ = c.abort()
	}
	_ = g.srv.Close()
	g.cancel()
}

func (s *server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	_ = s.Stop()
	s.wg.Wait()
	return nil
}

// track counts a goroutine or call in s.wg; it fails once Close has begun.
func (s *server) track() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	return true
}

// lifeContext is the current generation's context (a cancelled one while
// stopped), for backend calls that cri-streaming gives no request context.
func (s *server) lifeContext() context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == nil {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}
	return s.current.ctx
}

// ---- URLs and tokens ----

func (s *server) buildURL(kind string, req any) (string, error) {
	s.mu.Lock()
	addr, scheme, started, closed := s.addr, s.scheme, s.current != nil, s.closed
	s.mu.Unlock()
	if s.urlAddr != "" {
		addr = s.urlAddr
	}
	if closed {
		return "", status.Error(codes.Unavailable, "streaming server closed")
	}
	if !started && strings.HasSuffix(addr, ":0") {
		return "", status.Error(codes.Unavailable, "streaming server not started")
	}
	tok, err := s.tokens.insert(kind, req)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s://%s/%s/%s", scheme, addr, kind, tok), nil
}

// The checks are cri-streaming's (server.go), so that a bad request fails
// at the RPC as it does on containerd and CRI-O.
func (s *server) GetExec(req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	if req.GetContainerId() == "" {
		return nil, status.Errorf(codes.InvalidArgument, "missing required container_id")
	}
	if req.Tty && req.Stderr {
		return nil, status.Errorf(codes.InvalidArgument, "tty and stderr cannot both be true")
	}
	if !req.Stdin && !req.Stdout && !req.Stderr {
		return nil, status.Errorf(codes.InvalidArgument, "one of stdin, stdout, or stderr must be set")
	}
	u, err := s.buildURL(kindExec, req)
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ExecResponse{Url: u}, nil
}

func (s *server) GetAttach(req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	if req.GetContainerId() == "" {
		return nil, status.Errorf(codes.InvalidArgument, "missing required container_id")
	}
	if req.Tty && req.Stderr {
		return nil, status.Errorf(codes.InvalidArgument, "tty and stderr cannot both be true")
	}
	if !req.Stdin && !req.Stdout && !req.Stderr {
		return nil, status.Errorf(codes.InvalidArgument, "one of stdin, stdout, and stderr must be set")
	}
	u, err := s.buildURL(kindAttach, req)
	if err != nil {
		return nil, err
	}
	return &runtimeapi.AttachResponse{Url: u}, nil
}

func (s *server) GetPortForward(req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	if req.GetPodSandboxId() == "" {
		return nil, status.Errorf(codes.InvalidArgument, "missing required pod_sandbox_id")
	}
	u, err := s.buildURL(kindPortForward, req)
	if err != nil {
		return nil, err
	}
	return &runtimeapi.PortForwardResponse{Url: u}, nil
}

// ---- HTTP ----

// ServeHTTP consumes the token, applies the upgrade faults and hands the
// request to the profile.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.track() {
		http.Error(w, "streaming server closed", http.StatusServiceUnavailable)
		return
	}
	defer s.wg.Done()

	kind, tok, ok := splitPath(r.URL.Path)
	if !ok || (r.Method != http.MethodGet && r.Method != http.MethodPost) {
		http.NotFound(w, r)
		return
	}
	req, ok := s.tokens.consume(kind, tok)
	if !ok {
		http.NotFound(w, r)
		return
	}
	s.armRestart() // restart.go
	sess := &session{srv: s, kind: kind, req: req, conn: connFrom(r.Context()), remaining: -1}
	if sess.conn != nil {
		sess.conn.linger.Store(true)
	}
	if s.faults.dropAfter >= 0 {
		sess.remaining = s.faults.dropAfter
	}
	if d := s.faults.delay; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if s.faults.refuseUpgrade {
		http.Error(w, fmt.Sprintf("unable to upgrade: %s upgrade refused by the mock runtime's fault %s", kind, FaultRefuseUpgrade), http.StatusForbidden)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	sess.ctx = ctx
	s.proto.serve(w, r.WithContext(withSession(ctx, sess)), sess)
}

func splitPath(p string) (kind, tok string, ok bool) {
	rest, found := strings.CutPrefix(p, "/")
	if !found {
		return "", "", false
	}
	kind, tok, found = strings.Cut(rest, "/")
	if !found || tok == "" || strings.Contains(tok, "/") {
		return "", "", false
	}
	switch kind {
	case kindExec, kindAttach, kindPortForward:
		return kind, tok, true
	}
	return "", "", false
}
