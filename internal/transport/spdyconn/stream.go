package spdyconn

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/moby/spdystream/spdy"
	"k8s.io/streaming/pkg/httpstream"
)

// errLocalReset is what writing to a stream this side reset returns.
var errLocalReset = errors.New("stream reset")

// ErrOverrun is what reading or writing a stream returns once it was
// dropped because its reader fell behind (Conn.SetOverrunWait).
var ErrOverrun = errors.New("stream dropped: its reader fell behind")

// errWriteClosed is what writing after Close returns.
var errWriteClosed = errors.New("write on a closed stream")

// Stream is one stream of a Conn.
type Stream struct {
	conn    *Conn
	id      uint32
	headers http.Header

	replied   chan struct{} // closed by the server's reply or reset
	dropped   chan struct{} // closed when the stream overran (ErrOverrun)
	replyOnce sync.Once
	replyErr  error // set before replied closes

	// fill is the chunk the read loop is filling, not yet visible to
	// readers; listed marks the stream as on the conn's filling list (both
	// read loop only).
	fill   []byte
	listed bool

	removed atomic.Bool // RemoveStreams: Close leaves it alone

	mu          sync.Mutex
	cond        *sync.Cond // data, the end, or room in the backlog
	queue       [][]byte   // received chunks not yet read
	spare       [][]byte   // WriteTo's batch slice, reused
	head        int        // bytes of queue[0] already read
	backlog     int        // bytes in queue not yet read
	end         error      // io.EOF once no more data will come
	resetErr    error      // set once either side reset the stream
	localClosed bool       // this side sent its FIN
	lastRead    time.Time  // when a reader last took data
}

var (
	_ httpstream.Stream = (*Stream)(nil)
	_ io.WriterTo       = (*Stream)(nil)
)

func newStream(c *Conn, headers http.Header) *Stream {
	s := &Stream{conn: c, headers: headers, replied: make(chan struct{}), dropped: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// Headers are the headers the stream was opened with.
func (s *Stream) Headers() http.Header { return s.headers }

// Identifier is the stream's SPDY id.
func (s *Stream) Identifier() uint32 { return s.id }

// Read reads the stream's received data; io.EOF once the server finished or
// reset the stream, or the connection ended, and all was read.
func (s *Stream) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.queue) == 0 && s.end == nil {
		s.cond.Wait()
	}
	if len(s.queue) == 0 {
		return 0, s.end
	}
	n := 0
	for n < len(p) && len(s.queue) > 0 {
		k := copy(p[n:], s.queue[0][s.head:])
		n += k
		s.head += k
		if s.head == len(s.queue[0]) {
			putChunk(s.queue[0])
			s.queue[0] = nil
			s.queue = s.queue[1:]
			s.head = 0
		}
	}
	s.backlog -= n
	s.lastRead = time.Now()
	s.cond.Broadcast() // the read loop may wait for room
	return n, nil
}

// WriteTo writes the stream's data to w as it arrives, a whole chunk (one
// or more received frames) per write, until the stream ends; io.Copy calls
// it. The end of the stream is not an error.
func (s *Stream) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for {
		s.mu.Lock()
		for len(s.queue) == 0 && s.end == nil {
			s.cond.Wait()
		}
		if len(s.queue) == 0 {
			end := s.end
			s.mu.Unlock()
			if errors.Is(end, io.EOF) {
				return total, nil
			}
			return total, end
		}
		batch, head := s.queue, s.head
		s.queue, s.spare, s.head, s.backlog = s.spare[:0], nil, 0, 0
		s.lastRead = time.Now()
		s.cond.Broadcast()
		s.mu.Unlock()

		var err error
		for i, b := range batch {
			if err == nil {
				n, werr := w.Write(b[head:])
				total += int64(n)
				switch {
				case werr != nil:
					err = werr
				case n < len(b)-head:
					err = io.ErrShortWrite
				}
			}
			head = 0
			putChunk(b)
			batch[i] = nil
		}
		s.mu.Lock()
		s.spare = batch[:0]
		s.mu.Unlock()
		if err != nil {
			return total, err
		}
	}
}

// Write sends p on the stream.
func (s *Stream) Write(p []byte) (int, error) {
	s.mu.Lock()
	err := s.resetErr
	if err == nil && s.localClosed {
		err = errWriteClosed
	}
	s.mu.Unlock()
	if err != nil {
		return 0, err
	}
	if err := s.conn.writeData(s.id, p, false); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close finishes this side of the stream (the server still sends until it
// finishes its side).
func (s *Stream) Close() error {
	s.mu.Lock()
	if s.localClosed || s.resetErr != nil {
		s.mu.Unlock()
		return nil
	}
	s.localClosed = true
	done := s.end != nil
	s.mu.Unlock()
	err := s.conn.writeData(s.id, nil, true)
	if done {
		s.conn.forget(s) // both sides finished
	}
	return err
}

// Reset ends both sides of the stream at once: unread data is dropped, and
// the server is told.
func (s *Stream) Reset() error {
	s.mu.Lock()
	if s.resetErr != nil {
		s.mu.Unlock()
		return nil
	}
	s.resetErr = errLocalReset
	s.dropLocked()
	if s.end == nil {
		s.end = io.EOF
	}
	s.cond.Broadcast()
	s.mu.Unlock()
	accepted := s.accepted()
	s.reply(errLocalReset)
	s.conn.forget(s)
	c := s.conn
	c.mu.Lock()
	gone := c.err != nil
	c.mu.Unlock()
	if gone || !accepted {
		// Never reset a stream the server has not replied to: spdystream
		// servers (containerd's, cri-streaming's) then block a goroutine
		// for good delivering the reset to nobody. The connection's end
		// tells them instead.
		return nil
	}
	return c.writeControl(&spdy.RstStreamFrame{StreamId: spdy.StreamId(s.id), Status: spdy.Cancel})
}

func (s *Stream) dropLocked() {
	for i, b := range s.queue {
		putChunk(b)
		s.queue[i] = nil
	}
	s.queue, s.head, s.backlog = s.queue[:0], 0, 0
}

// accepted reports whether the server replied to the stream.
func (s *Stream) accepted() bool {
	select {
	case <-s.replied:
		return s.replyErr == nil
	default:
		return false
	}
}

func (s *Stream) reply(err error) {
	s.replyOnce.Do(func() {
		s.replyErr = err
		close(s.replied)
	})
}

// remoteEnd records that no more data will come (end), and a reset by the
// server or the connection's end (reset) after which writes fail.
func (s *Stream) remoteEnd(reset, end error) {
	s.reply(reset)
	s.mu.Lock()
	if s.end == nil {
		s.end = end
	}
	if reset != nil && s.resetErr == nil {
		s.resetErr = reset
	}
	done := s.localClosed || s.resetErr != nil
	s.cond.Broadcast()
	s.mu.Unlock()
	if done {
		s.conn.forget(s) // both sides finished: late frames go nowhere
	}
}

// receive reads n bytes of a DATA frame's payload from the connection into
// the stream's chunks (read loop only).
func (s *Stream) receive(n int) error {
	c := s.conn
	for n > 0 {
		if s.fill == nil {
			s.fill = getChunk()
			if !s.listed {
				s.listed = true
				c.filling = append(c.filling, s)
			}
		}
		l := len(s.fill)
		k := min(n, cap(s.fill)-l)
		if _, err := io.ReadFull(c.br, s.fill[l:l+k]); err != nil {
			return err
		}
		s.fill = s.fill[:l+k]
		n -= k
		if len(s.fill) == cap(s.fill) {
			s.publish()
		}
	}
	return nil
}

// publish hands the chunk the read loop filled to the stream's readers
// (read loop only), then waits while the stream holds maxBacklog unread:
// for good, or (SetOverrunWait) until its reader has read nothing for the
// overrun wait, when the stream is dropped instead.
func (s *Stream) publish() {
	if len(s.fill) == 0 {
		return
	}
	fill := s.fill
	s.fill = nil
	s.mu.Lock()
	if s.resetErr != nil || s.end != nil {
		s.mu.Unlock()
		putChunk(fill) // nobody will read it
		return
	}
	s.queue = append(s.queue, fill)
	s.backlog += len(fill)
	s.cond.Broadcast()
	since := time.Now()
	overrun := false
	for s.backlog > maxBacklog && s.resetErr == nil && s.end == nil {
		// Read on every turn: SetOverrunWait may change it meanwhile (and
		// wakes this wait when it does).
		wait := time.Duration(s.conn.overrunWait.Load())
		if wait <= 0 {
			s.cond.Wait()
			continue
		}
		idle := time.Since(since)
		if s.lastRead.After(since) {
			idle = time.Since(s.lastRead)
		}
		if idle >= wait {
			overrun = true
			s.overrunLocked(wait)
			break
		}
		t := time.AfterFunc(wait-idle, func() {
			s.mu.Lock() // under the lock: a wake-up before Wait is not lost
			s.cond.Broadcast()
			s.mu.Unlock()
		})
		s.cond.Wait()
		t.Stop()
	}
	s.mu.Unlock()
	if overrun {
		s.conn.forget(s)
		// The server stops sending it; the other streams flow on.
		_ = s.conn.writeControl(&spdy.RstStreamFrame{StreamId: spdy.StreamId(s.id), Status: spdy.Cancel})
	}
}

// overrunLocked drops the stream whose reader stopped (s.mu held): what it
// holds is discarded, and reads and writes fail with ErrOverrun.
func (s *Stream) overrunLocked(wait time.Duration) {
	err := fmt.Errorf("%w: %d MiB from the server waited unread for %s", ErrOverrun, maxBacklog>>20, wait)
	s.dropLocked()
	s.resetErr, s.end = err, err
	s.cond.Broadcast()
	close(s.dropped)
}

// Dropped is closed when the stream was dropped because its reader fell
// behind (SetOverrunWait); Err then says so.
func (s *Stream) Dropped() <-chan struct{} { return s.dropped }

// Err is why the stream was dropped or reset, nil while it is not.
func (s *Stream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resetErr
}
