package portforward

import (
	"sync/atomic"
	"time"
)

// stallWatch notices a SPDY session that stopped moving data: writes in
// progress and nothing read or written for the stall timeout. (spdystream has
// no flow control per stream; a runtime that stops reading one stream stops
// reading the whole connection: see pool.go.)
type stallWatch struct {
	writing  atomic.Int64 // writes in progress
	progress atomic.Int64 // unix nanoseconds of the last progress
}

func (s *spdySession) progressed() { s.stall.progress.Store(time.Now().UnixNano()) }

func (s *spdySession) writeStarts() {
	if s.stall.writing.Add(1) == 1 {
		// From idle: the stall clock starts now.
		s.progressed()
	}
}

func (s *spdySession) writeEnds() {
	s.stall.writing.Add(-1)
	s.progressed()
}

// stalledFor reports whether writes have waited with nothing moving for d.
func (s *spdySession) stalledFor(d time.Duration, now time.Time) bool {
	return s.stall.writing.Load() > 0 && now.Sub(time.Unix(0, s.stall.progress.Load())) >= d
}

// watchStalls calls onStall (once) when the session stalls for timeout,
// checking a few times per timeout until the session ends.
func (s *spdySession) watchStalls(timeout time.Duration, onStall func()) {
	if timeout <= 0 {
		return
	}
	s.watch.Add(1)
	go func() {
		defer s.watch.Done()
		tick := time.NewTicker(max(timeout/4, 10*time.Millisecond))
		defer tick.Stop()
		for {
			select {
			case <-s.closing:
				return
			case <-s.conn.CloseChan():
				return
			case now := <-tick.C:
				if s.stalledFor(timeout, now) {
					onStall() // shuts the session down; waits for nothing
					return
				}
			}
		}
	}()
}

// tryAcquire takes a connection slot unless the session is retired or lost,
// or (limit > 0) already carries limit connections.
func (s *spdySession) tryAcquire(limit int) bool {
	if s.lost() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.retired || (limit > 0 && s.active >= limit) {
		return false
	}
	s.active++
	s.setOverrunLocked()
	return true
}

// load is the number of open connections.
func (s *spdySession) load() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active
}

// abort closes the socket under the session without waiting for anything:
// writers blocked on a runtime that stopped reading return at once, and
// the rest of the shutdown can take the SPDY library's locks.
func (s *spdySession) abort() {
	_ = s.raw.Close()
	s.shutdown()
}

func (s *spdySession) acquire() {
	s.mu.Lock()
	s.active++
	s.setOverrunLocked()
	s.mu.Unlock()
}

func (s *spdySession) release() {
	s.mu.Lock()
	s.active--
	s.setOverrunLocked()
	last := s.retired && s.active == 0
	s.mu.Unlock()
	if last {
		s.idleOnce.Do(func() { close(s.idleRetired) })
	}
}

// setOverrunLocked turns the SPDY connection's overrun wait on while it
// carries more than one forwarded connection, off while it carries one
// (s.mu held, so that the last count sets the wait): only a connection
// with siblings to hold up is dropped for a client that stopped reading.
// spdystream's connection has no overrun wait.
func (s *spdySession) setOverrunLocked() {
	c, ok := s.conn.(interface{ SetOverrunWait(time.Duration) })
	if !ok {
		return
	}
	wait := time.Duration(0)
	if s.active > 1 {
		wait = pfOverrunWait
	}
	c.SetOverrunWait(wait)
}
