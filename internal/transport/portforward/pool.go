package portforward

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Over SPDY (and the tunnel) the forwarder spreads connections over a small
// pool of sessions instead of one. A SPDY session has no flow control per
// stream: the server hands every stream's data to one of a few frame
// workers, so a stream nobody reads any more on the server (containerd's
// handler stops reading when the pod resets its connection, while crisp may
// still be sending) blocks its worker and then the whole session, for every
// connection on it. With several sessions such a stall takes down a few
// connections, not all; a stalled session is noticed (writes blocked with
// nothing read for StallTimeout), taken out of use and closed, so its
// connections fail with a report instead of hanging, and later ones get
// fresh sessions.
const (
	// pfSessionConns is how many open connections a session takes before
	// the forwarder opens another.
	pfSessionConns = 16
	// pfMaxSessions bounds the pool: past it, connections share the least
	// loaded session.
	pfMaxSessions = 8
	// pfDefaultStall is ForwarderOptions.StallTimeout's default.
	pfDefaultStall = 10 * time.Second
)

// pooled is what the pool needs of a session: spdySession.
type pooled interface {
	ForwardSession
	tryAcquire(limit int) bool
	load() int
	openAcquired(ctx context.Context, port uint16) (ForwardConn, error)
}

// pendingSession is a session being established; connections that arrive
// meanwhile wait for it rather than each opening one.
type pendingSession struct {
	done     chan struct{}
	sess     pooled
	err      error
	reserved int
}

// pickSession returns a session with a slot acquired for one connection:
// the least loaded one below pfSessionConns, else one being established,
// else a new one while the pool has room, else the least loaded.
func (f *Forwarder) pickSession(ctx context.Context) (pooled, error) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil, errors.New("port-forward: forwarder closed")
	}
	f.pruneLocked()
	var best pooled
	for _, s := range f.pool {
		if best == nil || s.load() < best.load() {
			best = s
		}
	}
	if best != nil && best.load() < pfSessionConns && best.tryAcquire(0) {
		f.mu.Unlock()
		return best, nil
	}
	for _, p := range f.pending {
		if p.reserved < pfSessionConns {
			p.reserved++
			f.mu.Unlock()
			return f.awaitPending(ctx, p)
		}
	}
	if best != nil && len(f.pool)+len(f.pending) >= pfMaxSessions && best.tryAcquire(0) {
		f.mu.Unlock()
		return best, nil
	}
	p := &pendingSession{done: make(chan struct{}), reserved: 1}
	f.pending = append(f.pending, p)
	reason := "a fresh"
	replacing := len(f.pool) == 0
	if !replacing {
		reason = fmt.Sprintf("another (%d open)", len(f.pool))
	}
	chosen := *f.chosen
	f.mu.Unlock()

	f.opts.Config.Log("port-forward: opening %s %s connection with a fresh URL", reason, pfOfferName(chosen))
	// The dial outlives the connection that asked for it: others wait on it.
	sess, att, err := f.connect(context.WithoutCancel(ctx), chosen, nil)
	f.mu.Lock()
	for i, q := range f.pending {
		if q == p {
			f.pending = append(f.pending[:i], f.pending[i+1:]...)
			break
		}
	}
	if err != nil {
		p.err = fmt.Errorf("establishing a connection to the streaming server: %w", err)
	} else if ps, ok := sess.(pooled); !ok {
		_ = sess.Close()
		p.err = fmt.Errorf("port-forward: %s sessions cannot be pooled", pfOfferName(chosen))
	} else if f.closed {
		_ = sess.Close()
		p.err = errors.New("port-forward: forwarder closed")
	} else {
		p.sess = ps
		f.pool = append(f.pool, ps)
		if ss, ok := ps.(*spdySession); ok {
			ss.watchStalls(f.opts.StallTimeout, func() { f.stalled(ss) })
		}
		verb := "opened another" // the pool grows
		if replacing {
			verb = "re-established" // negotiation's session is gone
		}
		f.opts.Config.Log("port-forward: %s %s at %s (HTTP %d, upgrade %s); %d connection(s) to the streaming server",
			verb, pfOfferName(chosen), att.URL, att.Status, att.Upgrade.Round(time.Microsecond), len(f.pool))
	}
	f.mu.Unlock()
	close(p.done)
	return f.awaitPending(ctx, p)
}

func (f *Forwarder) awaitPending(ctx context.Context, p *pendingSession) (pooled, error) {
	select {
	case <-p.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if p.err != nil {
		return nil, p.err
	}
	if !p.sess.tryAcquire(0) {
		// Retired or lost already: the caller's retry takes another.
		return nil, errSessionLost
	}
	return p.sess, nil
}

// pruneLocked forgets sessions the runtime dropped.
func (f *Forwarder) pruneLocked() {
	kept := f.pool[:0]
	for _, s := range f.pool {
		select {
		case <-s.Done():
			f.opts.Config.Log("port-forward: a connection to the streaming server was lost; the next connection opens a fresh one")
			_ = s.Close() // already gone: this only waits for its watchers
		default:
			kept = append(kept, s)
		}
	}
	clear(f.pool[len(kept):])
	f.pool = kept
}

// removeLocked takes s out of the pool; it reports whether s was there.
func (f *Forwarder) removeLocked(s ForwardSession) bool {
	for i, p := range f.pool {
		if ForwardSession(p) == s {
			f.pool = append(f.pool[:i], f.pool[i+1:]...)
			return true
		}
	}
	return false
}

// stalled takes a session that stopped moving data out of use and closes
// it: its connections fail (and are reported) instead of hanging.
func (f *Forwarder) stalled(s *spdySession) {
	f.mu.Lock()
	f.removeLocked(s)
	f.mu.Unlock()
	f.report("port-forward: the streaming server stopped reading a %s connection (nothing moved for %s while %d connection(s) had data to send): closing it and its connections; new connections use fresh ones",
		s.Protocol(), f.opts.StallTimeout, s.load())
	s.shutdown()
}

// abortSessions closes every session's socket under the connections still
// open, without waiting: writers blocked on a runtime that stopped reading
// return at once. For shutdown after the drain.
func (f *Forwarder) abortSessions() {
	f.mu.Lock()
	all := make([]ForwardSession, 0, len(f.pool)+len(f.retired))
	for _, s := range f.pool {
		all = append(all, s)
	}
	all = append(all, f.retired...)
	f.mu.Unlock()
	for _, s := range all {
		if ss, ok := s.(*spdySession); ok {
			ss.abort()
		}
	}
}
