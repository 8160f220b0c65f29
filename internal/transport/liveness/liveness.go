// Package liveness bounds how long a streaming connection may go without a
// sign of life from its peer, for every transport crisp speaks. It wraps
// the TCP connection beneath TLS and the protocol, sets TCP_USER_TIMEOUT on
// it (data crisp sent that the peer's kernel does not acknowledge, or
// cannot take, for the bound ends the connection; off while the peer sends,
// which proves it alive), and watches its reads:
// while crisp waits on the network and nothing arrives, it has the
// protocol send a ping (SPDY PING, WebSocket ping), and when nothing at all
// arrives for the bound, pings included, it closes the connection, and
// reads and writes then fail with a *DeadPeerError that says what was seen
// last.
//
// Only time spent waiting on the network counts: while crisp is not
// reading (a slow local reader, `| less` paused), the peer is not asked to
// prove anything, and nothing unread is lost. A live peer answers pings
// however quiet its command is: the answers prove liveness, not data. And a
// ping goes out only after the bound's first quarter of silence with
// everything received read, so it never lands on a server that closed with
// output still queued (the WebSocket reset of docs/runtimes.md). It knows
// nothing of the protocols: the ping is the caller's function.
package liveness

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Conn is a connection watched for a sign of life. Its zero bound (Wrap's
// 0) watches nothing.
type Conn struct {
	net.Conn
	bound time.Duration
	epoch time.Time // the monotonic origin of the times below

	reading   atomic.Int32 // Reads waiting on the network
	waitSince atomic.Int64 // since epoch: the last byte, or the start of a wait when nothing was waited on
	lastByte  atomic.Int64 // since epoch; -1: none yet
	pings     atomic.Int32 // pings sent since the last byte

	mu      sync.Mutex
	err     *DeadPeerError // why the watch ended the connection
	started bool
	stop    chan struct{}
	wg      sync.WaitGroup
}

// Wrap watches nc with bound (0 or less: not at all, but reads still
// report a kernel's timeout as a *DeadPeerError) and sets nc's
// TCP_USER_TIMEOUT to bound. The watch starts with Start, once the session
// runs.
func Wrap(nc net.Conn, bound time.Duration) *Conn {
	c := &Conn{Conn: nc, bound: max(bound, 0), epoch: time.Now(), stop: make(chan struct{})}
	c.lastByte.Store(-1)
	if c.bound > 0 {
		_ = setUserTimeout(nc, c.bound) // best effort: the pings bound it anyway
	}
	return c
}

// Bound is the bound the connection is watched with (0: none).
func (c *Conn) Bound() time.Duration {
	if c == nil {
		return 0
	}
	return c.bound
}

func (c *Conn) now() int64 { return int64(time.Since(c.epoch)) }

// Read reads from the connection, recording when bytes arrive and while it
// waits for them.
func (c *Conn) Read(p []byte) (int, error) {
	if c.reading.Add(1) == 1 {
		// A wait begins: it counts from now, or from the last byte if
		// that came later (it cannot).
		c.waitSince.Store(c.now())
	}
	n, err := c.Conn.Read(p)
	if n > 0 {
		t := c.now()
		c.lastByte.Store(t)
		c.waitSince.Store(t)
		c.pings.Store(0)
	}
	c.reading.Add(-1)
	if err != nil {
		err = c.explain(err)
	}
	return n, err
}

// Write writes to the connection; a write that fails because the watch or
// the kernel ended it says so.
func (c *Conn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if err != nil {
		err = c.explain(err)
	}
	return n, err
}

// Close stops the watch and closes the connection.
func (c *Conn) Close() error {
	c.mu.Lock()
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	c.mu.Unlock()
	err := c.Conn.Close()
	c.wg.Wait()
	return err
}

// Err is the *DeadPeerError that ended the connection, or nil.
func (c *Conn) Err() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		return nil
	}
	return c.err
}

// explain turns the error of a read or write on a connection the watch
// ended, or the kernel timed out, into a *DeadPeerError.
func (c *Conn) explain(err error) error {
	if dead := c.Err(); dead != nil {
		return dead
	}
	if errors.Is(err, syscall.ETIMEDOUT) {
		return c.dead(true)
	}
	return err
}

// Start begins the watch: ping sends one ping on the session's protocol
// (it may wait for the answer too, but must return once the connection is
// closed; a failure is ignored: the silence that follows decides).
func (c *Conn) Start(ping func() error) {
	if c == nil || c.bound <= 0 || ping == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.stop:
		return
	default:
	}
	if c.started {
		return
	}
	c.started = true
	c.wg.Add(1)
	go c.watch(ping)
}

// tick is how often the watch looks: a sixteenth of the bound, within
// [10ms, 1s], so a dead peer is noticed within the bound and a second.
func (c *Conn) tick() time.Duration {
	return min(max(c.bound/16, 10*time.Millisecond), time.Second)
}

func (c *Conn) watch(ping func() error) {
	defer c.wg.Done()
	t := time.NewTicker(c.tick())
	defer t.Stop()
	every := int64(c.bound / 4)
	var lastPing int64 = -1 // since epoch: the last ping sent
	var busy atomic.Bool    // a ping is being written
	kernelOn := true        // TCP_USER_TIMEOUT is set (Wrap)
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		// A peer that sent something within half the bound is alive,
		// even when it takes none of crisp's data (its window stays
		// closed while it writes to crisp): the kernel's timeout is off
		// then, and back on once the peer has been silent that long
		// (the kernel counts the stall from its start, so a peer that
		// neither takes nor sends for the bound ends at once).
		last := c.lastByte.Load()
		if sending := last >= 0 && c.now()-last < int64(c.bound/2); sending == kernelOn {
			timeout := c.bound
			if sending {
				timeout = 0
			}
			_ = setUserTimeout(c.Conn, timeout) // best effort: the pings bound it anyway
			kernelOn = !sending
		}
		if c.reading.Load() == 0 {
			continue // nothing waited for: the peer is not asked to prove anything
		}
		now := c.now()
		since := c.waitSince.Load()
		waited := now - since
		if waited >= int64(c.bound) && c.pings.Load() > 0 {
			c.end()
			return
		}
		if waited >= every && (lastPing < since || now-lastPing >= every) && busy.CompareAndSwap(false, true) {
			lastPing = now
			c.pings.Add(1)
			// Its own goroutine: a write to a peer that takes nothing
			// blocks (until TCP_USER_TIMEOUT, or the connection's end),
			// and the watch must go on. It ends with that ping: Close
			// does not wait for it, as a ping may wait on the protocol's
			// reader, which may be the one closing.
			go func() {
				defer busy.Store(false)
				_ = ping() // a ping that cannot go out leaves the silence to decide
			}()
		}
	}
}

// end declares the peer dead and closes the connection under the reads.
func (c *Conn) end() {
	_ = c.dead(false)  // the reason is kept in c.err for the reads and writes
	_ = c.Conn.Close() // the end: the reads and writes now fail with the reason
}

// dead records why the connection ended (once) and returns it.
func (c *Conn) dead(kernel bool) *DeadPeerError {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		e := &DeadPeerError{Addr: remoteAddr(c.Conn), Bound: c.bound, Kernel: kernel, Pings: int(c.pings.Load()), LastByte: -1}
		if t := c.lastByte.Load(); t >= 0 {
			e.LastByte = time.Duration(c.now() - t)
		}
		c.err = e
	}
	return c.err
}

func remoteAddr(nc net.Conn) string {
	if a := nc.RemoteAddr(); a != nil {
		return a.String()
	}
	return "?"
}

// DeadPeerError is a connection ended because its peer gave no sign of
// life for the bound.
type DeadPeerError struct {
	// Addr is the peer's address.
	Addr string
	// Bound is the bound (--peer-timeout).
	Bound time.Duration
	// Kernel: the kernel ended the connection (TCP_USER_TIMEOUT: what
	// crisp sent went unacknowledged, or could not be sent, for the bound);
	// else crisp's watch did (nothing received, pings unanswered).
	Kernel bool
	// Pings is how many pings went unanswered.
	Pings int
	// LastByte is how long before the end the last byte arrived (<0: none
	// since the session began).
	LastByte time.Duration
}

func (e *DeadPeerError) Error() string {
	last := "no byte received since the session began"
	if e.LastByte >= 0 {
		last = fmt.Sprintf("last byte received %s ago", e.LastByte.Round(100*time.Millisecond))
	}
	if e.Kernel {
		return fmt.Sprintf("the peer at %s neither took nor acknowledged what crisp sent for %s, sending nothing itself, so the kernel ended the connection (TCP_USER_TIMEOUT); %s; is the runtime or its streaming server frozen, or the network cut? (--peer-timeout sets the bound, 0 waits for good)",
			e.Addr, e.Bound, last)
	}
	return fmt.Sprintf("no sign of life from the peer at %s for %s: %s, %d %s unanswered; is the runtime or its streaming server frozen, or the network cut? (--peer-timeout sets the bound, 0 waits for good)",
		e.Addr, e.Bound, last, e.Pings, plural(e.Pings, "ping", "pings"))
}

// Timeout reports true, as a net.Error's timeout does.
func (e *DeadPeerError) Timeout() bool { return true }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
