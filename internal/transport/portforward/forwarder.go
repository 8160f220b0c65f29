package portforward

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/transport/spdyconn"
)

// pfCopyBuffer is the size of each direction's copy buffer: memory stays
// bounded by two of them per open connection, whatever is transferred.
const pfCopyBuffer = 64 << 10

// pfDefaultDrain is how long open connections may finish after the forwarder
// is told to stop.
const pfDefaultDrain = 2 * time.Second

// pfDefaultFinishedIdle is ForwarderOptions.FinishedIdle's default.
const pfDefaultFinishedIdle = 2 * time.Second

// ForwarderOptions configure a Forwarder.
type ForwarderOptions struct {
	// Source makes a fresh port-forward URL (one PortForward RPC) per
	// handshake.
	Source URLSource
	// Transport restricts the protocols tried: auto tries SPDY, then the
	// SPDY-over-WebSocket tunnel, then the direct WebSocket protocol;
	// websocket the last two; spdy only the first.
	Transport transport.Transport
	// Offers, when set, replaces the transport's plan: exactly these
	// handshakes, in order (a probe or benchmark pins one protocol so).
	Offers []transport.Offer
	Config transport.Config
	// Report receives one line per forwarded connection that failed. nil
	// discards them.
	Report func(format string, args ...any)
	// DrainTimeout bounds how long open connections may finish once Serve's
	// context ends (default 2s); then the connections to the runtime are
	// closed under those left.
	DrainTimeout time.Duration
	// StallTimeout is how long a SPDY connection may move nothing while
	// connections wait to send on it before it is closed as stalled
	// (default 10s); and how long a direct WebSocket connection whose local
	// side has finished waits for that side to read what crisp has for it
	// before it is closed, reported as a loss (finish.go).
	StallTimeout time.Duration
	// FinishedIdle is how long a direct WebSocket connection whose local
	// side has finished sending stays open while the remote side sends
	// nothing (default 2s). The protocol cannot tell the remote side that
	// the local one is done, so without it a finished connection would hold
	// its sockets, and whatever serves it remotely, until the remote side
	// closes by itself.
	FinishedIdle time.Duration
}

// URLSource makes one fresh port-forward URL: one PortForward RPC
// with ports in PortForwardRequest.Port. ports is nil for a SPDY session,
// which carries any port; the direct WebSocket protocol passes the
// connection's port, because runtimes built on k8s.io/cri-streaming
// (containerd, CRI-O) take that protocol's ports from the request and ignore
// the URL's ?port= query (which kubelet-style servers read, and crisp sends
// too).
type URLSource func(ctx context.Context, ports []uint16) (string, error)

// Forwarder forwards connections to ports of one pod. It owns every
// forwarded connection's stream pair, so a failure closes that connection
// only (and retires the SPDY connection it came on: later connections get a
// fresh one); when the runtime drops the SPDY connection, the next forwarded
// connection re-establishes it with a fresh URL. Over the direct WebSocket
// protocol every connection has its own WebSocket and URL.
type Forwarder struct {
	opts    ForwarderOptions
	offers  []transport.Offer
	bufs    sync.Pool
	connSeq atomic.Int64
	ft      *transport.FileTrace // --trace-file; nil: none

	mu       sync.Mutex
	chosen   *transport.Offer    // the offer in use; nil until negotiated
	attempts []transport.Attempt // what negotiation tried
	pool     []pooled            // SPDY or tunnel sessions taking connections (pool.go)
	pending  []*pendingSession   // sessions being established
	retired  []ForwardSession    // sessions retired after a failure, closing
	closed   bool
}

// NewForwarder validates opts and returns a Forwarder; nothing is dialled yet.
func NewForwarder(opts ForwarderOptions) (*Forwarder, error) {
	if opts.Source == nil {
		return nil, errors.New("port-forward: no URL source")
	}
	offers := opts.Offers
	if len(offers) == 0 {
		var err error
		if offers, err = transport.PortForwardOffers(opts.Transport); err != nil {
			return nil, err
		}
	}
	for _, o := range offers {
		if _, err := pfKindOf(o); err != nil {
			return nil, err
		}
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = pfDefaultDrain
	}
	if opts.StallTimeout <= 0 {
		opts.StallTimeout = pfDefaultStall
	}
	if opts.FinishedIdle <= 0 {
		opts.FinishedIdle = pfDefaultFinishedIdle
	}
	f := &Forwarder{opts: opts, offers: offers, ft: transport.NewFileTrace(opts.Config, "port-forward")}
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
// come. The direct WebSocket protocol opens remote connections with its
// handshake, so it is checked with a handshake naming no port (see
// checkWebSocket). It returns the chosen offer; the error is a
// *NegotiationError when every handshake was refused.
func (f *Forwarder) Negotiate(ctx context.Context) (transport.Offer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.chosen != nil {
		return *f.chosen, nil
	}
	return f.negotiateLocked(ctx)
}

func (f *Forwarder) negotiateLocked(ctx context.Context) (transport.Offer, error) {
	if f.closed {
		return transport.Offer{}, errors.New("port-forward: forwarder closed")
	}
	for _, offer := range f.offers {
		if kind, _ := pfKindOf(offer); kind == pfKindWebSocket {
			att, err := f.checkWebSocket(ctx, offer)
			f.attempts = append(f.attempts, att)
			f.ft.Handshake(att)
			var refused *transport.RefusedError
			if errors.As(err, &refused) {
				f.opts.Config.Log("port-forward: %s; trying the next protocol", refused.Error())
				continue
			}
			if err != nil {
				return transport.Offer{}, err
			}
			f.chosen = &offer
			f.opts.Config.Log("port-forward: negotiated WebSocket %s at %s (HTTP %d, upgrade %s): one WebSocket (and one PortForward call) per connection; "+
				"this protocol cannot forward a half-close, so a connection whose local side has finished closes once the remote side has sent nothing for %s",
				strings.Join(offer.Protocols, " or "), att.URL, att.Status, att.Upgrade.Round(time.Microsecond), f.opts.FinishedIdle)
			transport.ReportTLS(f.opts.Config, "port-forward", att.URL, att.TLS)
			return offer, nil
		}
		sess, att, err := f.connect(ctx, offer, nil)
		f.attempts = append(f.attempts, att)
		var refused *transport.RefusedError
		if errors.As(err, &refused) {
			f.opts.Config.Log("port-forward: %s; trying the next protocol", refused.Error())
			continue
		}
		if err != nil {
			return transport.Offer{}, err
		}
		chosen := transport.Offer{Transport: offer.Transport, Protocols: []string{att.Protocol}}
		f.chosen = &chosen
		if ps, ok := sess.(pooled); ok {
			f.pool = append(f.pool, ps)
			if ss, ok := ps.(*spdySession); ok {
				ss.watchStalls(f.opts.StallTimeout, func() { f.stalled(ss) })
			}
		} else {
			_ = sess.Close()
		}
		f.opts.Config.Log("port-forward: negotiated %s at %s (HTTP %d, upgrade %s)",
			pfOfferName(chosen), att.URL, att.Status, att.Upgrade.Round(time.Microsecond))
		transport.ReportTLS(f.opts.Config, "port-forward", att.URL, att.TLS)
		return chosen, nil
	}
	return transport.Offer{}, &transport.NegotiationError{Op: "port-forward", Attempts: append([]transport.Attempt(nil), f.attempts...)}
}

// checkWebSocket asks whether the server speaks the direct WebSocket
// protocol without opening a remote connection: a handshake naming no port.
// cri-streaming servers upgrade it (and close at once: no channels), servers
// that read ports from the query answer 400 (they speak the protocol but
// want a port), and servers without it refuse (403).
func (f *Forwarder) checkWebSocket(ctx context.Context, offer transport.Offer) (transport.Attempt, error) {
	start := time.Now()
	u, err := f.opts.Source(ctx, nil)
	if err != nil {
		err = fmt.Errorf("port-forward: getting a streaming URL from the runtime: %w", err)
		return transport.Attempt{Offer: offer, Err: err}, err
	}
	att := transport.Attempt{Offer: offer, URL: u, RPC: time.Since(start)}
	cfg, tw := transport.WatchTLS(f.opts.Config, u)
	hctx, bound, done := boundUpgrade(ctx, cfg)
	ws, err := pfDialWebSocket(hctx, &att, u, cfg, 4096)
	done()
	att.TLS = tw.Result()
	if err == nil {
		_ = ws.Close()
		return att, nil
	}
	var refused *transport.RefusedError
	if errors.As(err, &refused) && refused.Status == http.StatusBadRequest {
		return att, nil
	}
	if !errors.As(err, &refused) {
		switch {
		case ctx.Err() != nil:
			err = ctx.Err()
		case bound.expired():
			err = bound.err(ctx, offer, u, err)
		default:
			err = fmt.Errorf("port-forward: connecting to the runtime's streaming server at %s with %s: %w; is the streaming server running and reachable from here?",
				u, pfOfferName(offer), tw.Describe(err))
		}
	}
	att.Err = err
	return att, err
}

// connect makes one handshake with a fresh URL.
func (f *Forwarder) connect(ctx context.Context, offer transport.Offer, ports []uint16) (ForwardSession, transport.Attempt, error) {
	start := time.Now()
	u, err := f.opts.Source(ctx, ports)
	if err != nil {
		err = fmt.Errorf("port-forward: getting a streaming URL from the runtime: %w", err)
		return nil, transport.Attempt{Offer: offer, Err: err}, err
	}
	rpc := time.Since(start)
	sess, att, err := Connect(ctx, u, offer, ports, f.opts.Config)
	att.RPC = rpc
	f.ft.Handshake(att)
	return sess, att, err
}

// Dial opens one forwarded connection to the remote port, negotiating first
// if needed and re-establishing a lost SPDY connection. The caller closes the
// connection.
func (f *Forwarder) Dial(ctx context.Context, port uint16) (ForwardConn, error) {
	if port == 0 {
		return nil, errors.New("port-forward: remote port 0 is not a port")
	}
	chosen, err := f.Negotiate(ctx)
	if err != nil {
		return nil, err
	}
	if kind, _ := pfKindOf(chosen); kind == pfKindWebSocket {
		sess, _, err := f.connect(ctx, chosen, []uint16{port})
		if err != nil {
			return nil, err
		}
		fc, err := sess.Open(ctx, port)
		if err != nil {
			_ = sess.Close()
			return nil, err
		}
		fc.(*wsPort).ownsSession = true
		return fc, nil
	}
	for attempt := 0; ; attempt++ {
		sess, err := f.pickSession(ctx)
		if errors.Is(err, errSessionLost) && attempt == 0 {
			continue
		}
		if err != nil {
			return nil, err
		}
		fc, err := sess.openAcquired(ctx, port)
		if errors.Is(err, errSessionLost) && attempt == 0 {
			f.dropSession(sess)
			continue
		}
		var re *RemoteError
		if errors.As(err, &re) || errors.Is(err, spdyconn.ErrCreateTimeout) {
			// A stream left unanswered: the runtime may have stalled the
			// whole connection, so later connections get a fresh one.
			f.retire(sess)
		}
		return fc, err
	}
}

// sessionOwner is a forwarded connection that knows its shared session.
type sessionOwner interface{ forwardSession() ForwardSession }

// retire takes a SPDY session out of use after one of its connections
// failed; it closes when its open connections end, and the next connection
// gets a fresh session (see spdySession.retire for why).
func (f *Forwarder) retire(s ForwardSession) {
	f.mu.Lock()
	current := f.removeLocked(s)
	if current {
		// Keep it to close with the forwarder; forget those already gone.
		kept := f.retired[:0]
		for _, r := range f.retired {
			select {
			case <-r.Done():
			default:
				kept = append(kept, r)
			}
		}
		f.retired = append(kept, s)
	}
	f.mu.Unlock()
	if r, ok := s.(interface{ retire() }); ok {
		if current {
			f.opts.Config.Log("port-forward: a connection failed; its %s connection takes no new ones (the next gets a fresh one)", s.Protocol())
		}
		r.retire()
	}
}

func (f *Forwarder) dropSession(s ForwardSession) {
	f.mu.Lock()
	f.removeLocked(s)
	f.mu.Unlock()
	_ = s.Close()
}

// Close closes the pooled sessions and retired ones; forwarded connections
// on them end.
func (f *Forwarder) Close() error {
	f.mu.Lock()
	f.closed = true
	all := append([]ForwardSession(nil), f.retired...)
	for _, s := range f.pool {
		all = append(all, s)
	}
	f.pool, f.retired = nil, nil
	f.mu.Unlock()
	for _, s := range all {
		_ = s.Close()
	}
	return nil
}

// pfTraceConn prints one line per read and write (-vv), and one when each
// side ends its half of the connection.
type pfTraceConn struct {
	ForwardConn
	cfg transport.Config
	id  int64
	ft  *transport.FileTrace // and records them in the trace file

	remoteEnd, localEnd sync.Once
}

func (c *pfTraceConn) forwardSession() ForwardSession {
	if so, ok := c.ForwardConn.(sessionOwner); ok {
		return so.forwardSession()
	}
	return nil
}

// dropped and dropErr pass the wrapped connection's on (droppable).
func (c *pfTraceConn) dropped() <-chan struct{} {
	if d, ok := c.ForwardConn.(droppable); ok {
		return d.dropped()
	}
	return nil
}

func (c *pfTraceConn) dropErr() error {
	if d, ok := c.ForwardConn.(droppable); ok {
		return d.dropErr()
	}
	return nil
}

// flushed passes the wrapped connection's on (pfFlusher).
func (c *pfTraceConn) flushed() (<-chan struct{}, error) {
	if fl, ok := c.ForwardConn.(pfFlusher); ok {
		return fl.flushed()
	}
	ch := make(chan struct{})
	close(ch) // nothing to ask: as before
	return ch, nil
}

func (c *pfTraceConn) Read(p []byte) (int, error) {
	n, err := c.ForwardConn.Read(p)
	if n > 0 {
		pfTracef(c.cfg, "<- conn%d data %d B (remote port %d)", c.id, n, c.RemotePort())
		c.ft.ForwardFrame("<-", p[:n], c.RemotePort(), c.id)
	}
	if errors.Is(err, io.EOF) {
		c.remoteEnd.Do(func() {
			pfTracef(c.cfg, "<- conn%d end (remote port %d)", c.id, c.RemotePort())
			c.ft.ForwardClose("remote", c.RemotePort(), c.id)
		})
	}
	return n, err
}

// CloseWrite traces the local side's end once the remote side was told.
func (c *pfTraceConn) CloseWrite() error {
	err := c.ForwardConn.CloseWrite()
	if err == nil {
		c.localEnd.Do(func() {
			pfTracef(c.cfg, "-> conn%d end (remote port %d)", c.id, c.RemotePort())
			c.ft.ForwardClose("local", c.RemotePort(), c.id)
		})
	}
	return err
}

func (c *pfTraceConn) Write(p []byte) (int, error) {
	n, err := c.ForwardConn.Write(p)
	pfTracef(c.cfg, "-> conn%d data %d B (remote port %d)", c.id, n, c.RemotePort())
	c.ft.ForwardFrame("->", p[:n], c.RemotePort(), c.id)
	return n, err
}

func pfTracef(cfg transport.Config, format string, args ...any) {
	if cfg.Trace != nil {
		// One write per line: many connections trace at once.
		line := fmt.Sprintf("crisp: frame "+format, args...) + " " + time.Now().Format("15:04:05.000000") + "\n"
		_, _ = io.WriteString(cfg.Trace, line)
	}
}

func pfDeadlineSoon() time.Time { return time.Now().Add(time.Second) }
