package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// pfCopyBuffer is the size of each direction's copy buffer: memory stays
// bounded by two of them per open connection, whatever is transferred.
const pfCopyBuffer = 32 << 10

// pfDefaultDrain is how long open connections may finish after the forwarder
// is told to stop.
const pfDefaultDrain = 2 * time.Second

// ForwarderOptions configure a Forwarder.
type ForwarderOptions struct {
	// Source makes a fresh port-forward URL (one PortForward RPC) per
	// handshake.
	Source URLSource
	// Transport restricts the protocols tried: auto tries SPDY, then the
	// SPDY-over-WebSocket tunnel, then the direct WebSocket protocol;
	// websocket the last two; spdy only the first.
	Transport Transport
	Config    Config
	// Report receives one line per forwarded connection that failed. nil
	// discards them.
	Report func(format string, args ...any)
	// DrainTimeout bounds how long open connections may finish once Serve's
	// context ends (default 2s).
	DrainTimeout time.Duration
}

// Forwarder forwards connections to ports of one pod. It owns every
// forwarded connection's stream pair, so a failure closes that connection
// only; when the runtime drops the SPDY connection, the next forwarded
// connection re-establishes it with a fresh URL.
type Forwarder struct {
	opts     ForwarderOptions
	attempts [][]string
	bufs     sync.Pool
	connSeq  atomic.Int64

	mu      sync.Mutex
	chosen  []string       // the subprotocol(s) in use; nil until negotiated
	session ForwardSession // the shared SPDY or tunnel session
	closed  bool
}

// NewForwarder validates opts and returns a Forwarder; nothing is dialled yet.
func NewForwarder(opts ForwarderOptions) (*Forwarder, error) {
	if opts.Source == nil {
		return nil, errors.New("port-forward: no URL source")
	}
	t := opts.Transport
	if t == "" {
		t = Auto
	}
	if _, err := ParseTransport(string(t)); err != nil {
		return nil, err
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = pfDefaultDrain
	}
	f := &Forwarder{opts: opts, attempts: PortForwardAttempts(t)}
	f.bufs.New = func() any { b := make([]byte, pfCopyBuffer); return &b }
	return f, nil
}

func (f *Forwarder) report(format string, args ...any) {
	if f.opts.Report != nil {
		f.opts.Report(format, args...)
	}
}

// Negotiate picks the protocol in the transport's order, one fresh URL per
// handshake, and keeps the SPDY (or tunnel) session for the connections to
// come. The direct WebSocket protocol opens a remote connection with every
// handshake, so choosing it makes no handshake: the first forwarded
// connection is its test. It returns the chosen subprotocol.
func (f *Forwarder) Negotiate(ctx context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.chosen != nil {
		return f.chosen[0], nil
	}
	return f.negotiateLocked(ctx)
}

func (f *Forwarder) negotiateLocked(ctx context.Context) (string, error) {
	if f.closed {
		return "", errors.New("port-forward: forwarder closed")
	}
	var refused []string
	for _, protos := range f.attempts {
		kind := PortForwardKindOf(protos[0])
		if kind == KindWebSocket {
			f.chosen = protos
			f.opts.Config.logf("port-forward: using WebSocket %s, one WebSocket (and one PortForward call) per connection; this protocol cannot forward a half-close, so a connection stays open until the remote side closes it", strings.Join(protos, " or "))
			return protos[0], nil
		}
		sess, up, err := f.connect(ctx, protos, nil)
		var re *UpgradeRefusedError
		if errors.As(err, &re) {
			refused = append(refused, re.Error())
			f.opts.Config.logf("port-forward: %s; trying the next protocol", re.Error())
			continue
		}
		if err != nil {
			return "", err
		}
		f.chosen, f.session = []string{up.Protocol}, sess
		f.opts.Config.logf("port-forward: using %s %s (upgraded in %s)", up.Kind, up.Protocol, up.Latency.Round(time.Microsecond))
		return up.Protocol, nil
	}
	return "", fmt.Errorf("port-forward: the runtime accepted none of the protocols crisp speaks for --transport %s: %s; try another --transport, or check the runtime's streaming server configuration",
		f.transport(), strings.Join(refused, "; "))
}

func (f *Forwarder) transport() Transport {
	if f.opts.Transport == "" {
		return Auto
	}
	return f.opts.Transport
}

// connect makes one handshake with a fresh URL.
func (f *Forwarder) connect(ctx context.Context, protos []string, ports []uint16) (ForwardSession, Upgrade, error) {
	u, err := f.opts.Source(ctx)
	if err != nil {
		return nil, Upgrade{Offered: protos}, fmt.Errorf("port-forward: getting a streaming URL from the runtime: %w", err)
	}
	return ConnectPortForward(ctx, u, ports, f.opts.Config, protos...)
}

// Dial opens one forwarded connection to the remote port, negotiating first
// if needed and re-establishing a lost SPDY connection. The caller closes the
// connection.
func (f *Forwarder) Dial(ctx context.Context, port uint16) (ForwardConn, error) {
	if port == 0 {
		return nil, errors.New("port-forward: remote port 0 is not a port")
	}
	if _, err := f.Negotiate(ctx); err != nil {
		return nil, err
	}
	f.mu.Lock()
	chosen := f.chosen
	f.mu.Unlock()
	if PortForwardKindOf(chosen[0]) == KindWebSocket {
		sess, _, err := f.connect(ctx, chosen, []uint16{port})
		if err != nil {
			return nil, err
		}
		fc, err := sess.Open(ctx, port)
		if err != nil {
			sess.Close()
			return nil, err
		}
		fc.(*wsPort).ownsSession = true
		return fc, nil
	}
	for attempt := 0; ; attempt++ {
		sess, err := f.sharedSession(ctx)
		if err != nil {
			return nil, err
		}
		fc, err := sess.Open(ctx, port)
		if errors.Is(err, errSessionLost) && attempt == 0 {
			f.dropSession(sess)
			continue
		}
		return fc, err
	}
}

// sharedSession returns the live SPDY session, re-establishing it (fresh URL,
// same protocol) when the runtime dropped it.
func (f *Forwarder) sharedSession(ctx context.Context) (ForwardSession, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, errors.New("port-forward: forwarder closed")
	}
	if f.session != nil {
		select {
		case <-f.session.Done():
			f.session.Close()
			f.session = nil
		default:
			return f.session, nil
		}
	}
	f.opts.Config.logf("port-forward: the connection to the streaming server was lost; re-establishing it with a fresh URL")
	sess, up, err := f.connect(ctx, f.chosen, nil)
	if err != nil {
		return nil, fmt.Errorf("re-establishing the port-forward connection: %w", err)
	}
	f.opts.Config.logf("port-forward: re-established %s %s (upgraded in %s)", up.Kind, up.Protocol, up.Latency.Round(time.Microsecond))
	f.session = sess
	return sess, nil
}

func (f *Forwarder) dropSession(s ForwardSession) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.session == s {
		f.session = nil
	}
	s.Close()
}

// Close closes the shared session; forwarded connections on it end.
func (f *Forwarder) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	if f.session != nil {
		f.session.Close()
		f.session = nil
	}
	return nil
}

// Serve accepts connections on l and forwards each to the remote port until
// ctx ends; then it closes l, lets open connections finish for the drain
// timeout, closes what is left and returns nil. A failed connection is
// reported and closed; the others carry on. Serve closes l.
func (f *Forwarder) Serve(ctx context.Context, l net.Listener, remote uint16) error {
	connCtx, cancelConns := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelConns()
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()

	var wg sync.WaitGroup
	var acceptErr error
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() == nil {
				acceptErr = fmt.Errorf("port-forward: accepting on %s: %w", l.Addr(), err)
				l.Close()
			}
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.handle(connCtx, c, remote)
		}()
	}

	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	t := time.NewTimer(f.opts.DrainTimeout)
	defer t.Stop()
	select {
	case <-drained:
	case <-t.C:
		cancelConns()
		<-drained
	}
	return acceptErr
}

// handle forwards one accepted connection.
func (f *Forwarder) handle(ctx context.Context, local net.Conn, remote uint16) {
	id := f.connSeq.Add(1)
	where := fmt.Sprintf("%s -> %d", local.LocalAddr(), remote)
	f.opts.Config.logf("port-forward: connection %d from %s on %s", id, local.RemoteAddr(), where)
	fc, err := f.Dial(ctx, remote)
	if err != nil {
		local.Close()
		if ctx.Err() == nil {
			f.report("port-forward %s: connection %d failed: %v", where, id, err)
		}
		return
	}
	if f.opts.Config.Trace != nil {
		fc = &pfTraceConn{ForwardConn: fc, cfg: f.opts.Config, id: id}
	}
	err = f.pipe(ctx, local, fc)
	if err != nil && ctx.Err() == nil {
		f.report("port-forward %s: connection %d failed: %v", where, id, err)
	}
}

// pipe copies both ways until the remote side ends, and returns the remote
// side's error, if any. A local end of input becomes a half-close.
func (f *Forwarder) pipe(ctx context.Context, local net.Conn, fc ForwardConn) error {
	var closeOnce sync.Once
	closeBoth := func() { closeOnce.Do(func() { fc.Close(); local.Close() }) }
	stop := context.AfterFunc(ctx, closeBoth)
	defer stop()

	upDone := make(chan struct{})
	go func() {
		defer close(upDone)
		bp := f.bufs.Get().(*[]byte)
		defer f.bufs.Put(bp)
		_, err := io.CopyBuffer(pfWriterOnly{fc}, pfReaderOnly{local}, *bp)
		if err != nil {
			// The local side broke: nothing more to forward either way.
			closeBoth()
			return
		}
		if cerr := fc.CloseWrite(); errors.Is(cerr, ErrHalfCloseUnsupported) {
			f.opts.Config.logf("port-forward: local side of %s finished sending; WebSocket v4 cannot forward that, so the connection stays open until the remote side closes", local.RemoteAddr())
		}
	}()

	bp := f.bufs.Get().(*[]byte)
	_, err := io.CopyBuffer(pfWriterOnly{local}, pfReaderOnly{fc}, *bp)
	f.bufs.Put(bp)
	if err == nil {
		if cw, ok := local.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
	}
	closeBoth()
	<-upDone
	if err != nil && pfLocalClosed(err) {
		return nil
	}
	return err
}

// pfLocalClosed recognises errors that only say the local socket went away
// (the user's client hung up), which are not worth a report.
func pfLocalClosed(err error) bool {
	var re *RemoteError
	if errors.As(err, &re) || errors.Is(err, errSessionLost) {
		return false
	}
	return errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrClosedPipe)
}

// pfReaderOnly and pfWriterOnly hide ReadFrom/WriteTo so io.CopyBuffer uses
// the pooled buffer instead of allocating its own.
type pfReaderOnly struct{ r io.Reader }

func (r pfReaderOnly) Read(p []byte) (int, error) { return r.r.Read(p) }

type pfWriterOnly struct{ w io.Writer }

func (w pfWriterOnly) Write(p []byte) (int, error) { return w.w.Write(p) }

// pfTraceConn prints one line per read and write (-vv).
type pfTraceConn struct {
	ForwardConn
	cfg Config
	id  int64
}

func (c *pfTraceConn) Read(p []byte) (int, error) {
	n, err := c.ForwardConn.Read(p)
	if n > 0 {
		pfTracef(c.cfg, "<- connection %d remote port %d %d bytes", c.id, c.RemotePort(), n)
	}
	return n, err
}

func (c *pfTraceConn) Write(p []byte) (int, error) {
	n, err := c.ForwardConn.Write(p)
	pfTracef(c.cfg, "-> connection %d remote port %d %d bytes", c.id, c.RemotePort(), n)
	return n, err
}

func pfTracef(cfg Config, format string, args ...any) {
	if cfg.Trace != nil {
		fmt.Fprintf(cfg.Trace, time.Now().Format("15:04:05.000000")+" "+format+"\n", args...)
	}
}

func pfDeadlineSoon() time.Time { return time.Now().Add(time.Second) }

// PortMapping is one forwarded port: Local 0 picks a free port.
type PortMapping struct {
	Local, Remote uint16
}

// LocalListener is a listening local socket and the remote port it forwards to.
type LocalListener struct {
	net.Listener
	Remote uint16
}

// Port is the local port the listener got.
func (l LocalListener) Port() uint16 {
	if a, ok := l.Addr().(*net.TCPAddr); ok {
		return uint16(a.Port)
	}
	return 0
}

// ListenLocal opens a TCP listener for every mapping on every address. An
// address is an IP or "localhost", which means 127.0.0.1 and ::1, either of
// which may be missing on a host (but not both). A local port 0 picks a free
// port on the first address and uses it on the others. On error every
// listener opened so far is closed.
func ListenLocal(addresses []string, mappings []PortMapping) ([]LocalListener, error) {
	type target struct {
		ip       string
		optional bool // part of localhost: may be missing
	}
	var targets []target
	for _, a := range addresses {
		if strings.EqualFold(a, "localhost") {
			targets = append(targets, target{"127.0.0.1", true}, target{"::1", true})
			continue
		}
		ip := net.ParseIP(a)
		if ip == nil {
			return nil, fmt.Errorf("port-forward: address %q is neither an IP address nor localhost", a)
		}
		targets = append(targets, target{ip: ip.String()})
	}
	var out []LocalListener
	fail := func(err error) ([]LocalListener, error) {
		for _, l := range out {
			l.Close()
		}
		return nil, err
	}
	for _, m := range mappings {
		local := m.Local
		opened := 0
		for _, t := range targets {
			addr := net.JoinHostPort(t.ip, fmt.Sprint(local))
			l, err := net.Listen("tcp", addr)
			if err != nil {
				if t.optional && pfAddressMissing(err) {
					continue
				}
				if errors.Is(err, syscall.EADDRINUSE) {
					return fail(fmt.Errorf("port-forward: local port %d on %s is already in use: free it or pick another local port (LOCAL:%d, or :%d for a free one)", local, t.ip, m.Remote, m.Remote))
				}
				return fail(fmt.Errorf("port-forward: listening on %s: %w", addr, err))
			}
			ll := LocalListener{Listener: l, Remote: m.Remote}
			out = append(out, ll)
			opened++
			if local == 0 {
				local = ll.Port()
			}
		}
		if opened == 0 {
			return fail(fmt.Errorf("port-forward: could not listen on any of %s for remote port %d", strings.Join(addresses, ", "), m.Remote))
		}
	}
	return out, nil
}

// pfAddressMissing tells "this host has no such address" (no IPv6 loopback,
// say) from real failures.
func pfAddressMissing(err error) bool {
	return errors.Is(err, syscall.EADDRNOTAVAIL) || errors.Is(err, syscall.EAFNOSUPPORT) || errors.Is(err, syscall.EPROTONOSUPPORT)
}
