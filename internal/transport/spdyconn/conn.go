// Package spdyconn owns crisp's client side of a SPDY/3.1 connection, the
// way the CRI streaming protocols use it: the client opens streams, the
// server replies to them, data flows both ways, and either side may reset a
// stream. It is an httpstream.Connection, so client-go's remotecommand and
// port-forward protocols run on it unchanged.
//
// It replaces spdystream beneath crisp's SPDY sessions for the data path's
// sake (docs/performance.md): one goroutine reads the connection through a
// 64 KiB buffer (read.go), pausing a moment between reads while data flows
// in bulk; received DATA payloads are read straight into reusable 64 KiB
// chunks of their stream, several small frames to a chunk, and a reader
// takes whole chunks (WriteTo: one write per chunk, no copy). Nothing is
// allocated per frame, and no frame crosses more than one goroutine.
// spdystream's framer decodes the control frames and encodes those crisp
// sends but SYN_STREAM, which crisp writes itself (synstream.go: its header
// block as stored deflate blocks, no compressor to set up).
package spdyconn

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/moby/spdystream/spdy"
	"k8s.io/streaming/pkg/httpstream"
)

const (
	// readBufferSize is the buffer beneath the frame reader: one read
	// syscall brings in several of a runtime's 4-32 KiB frames.
	readBufferSize = 64 << 10
	// chunkSize is the unit a stream's received data is kept and handed
	// out in.
	chunkSize = 64 << 10
	// maxBacklog bounds what one stream holds unread. SPDY as the CRI
	// servers speak it has no flow control (spdystream ignores
	// WINDOW_UPDATE), so past this the reader waits for the stream's reader
	// and TCP slows the server down, instead of memory growing without end.
	maxBacklog = 8 << 20
	// defaultCreateTimeout is how long a new stream waits for the server's
	// reply unless SetCreateTimeout says otherwise, as k8s.io/streaming
	// waits.
	defaultCreateTimeout = 30 * time.Second
	// closeWriteTimeout bounds the farewell frames written on Close: a
	// stalled peer must not hold Close.
	closeWriteTimeout = time.Second
	// bulkBurst and bulkPause: when the bytes read between two waits on
	// the network reach bulkBurst, the read loop pauses bulkPause before
	// the next read. containerd sends mostly 4 KiB frames; reading each as
	// it lands costs a wake-up per frame, which was most of crisp's client
	// CPU (docs/performance.md). Interactive traffic (small bursts) is
	// never delayed; bulk data is delayed at most bulkPause.
	// $CRISP_SPDY_BULK_PAUSE overrides bulkPause (a duration; 0 turns it
	// off): a measuring knob for scripts/perf-pause.sh, not a setting.
	bulkBurst = 32 << 10
	bulkPause = 500 * time.Microsecond
	// maxDataLength is the largest DATA payload SPDY's 24-bit length holds.
	maxDataLength = 1<<24 - 1
	// smallWrite is the largest payload copied behind its frame header to
	// leave in one write; larger ones go out with writev.
	smallWrite = 16 << 10
)

// ErrCreateTimeout marks a stream the server neither accepted nor refused
// within the create timeout.
var ErrCreateTimeout = errors.New("the streaming server did not accept a stream in time")

// ErrReset is what waiting for a stream's reply returns when the server
// resets it instead.
var ErrReset = errors.New("stream reset by the server")

// errClosed is what operations on a closed connection return.
var errClosed = errors.New("SPDY connection closed")

var chunks = sync.Pool{New: func() any { b := make([]byte, 0, chunkSize); return &b }}

func getChunk() []byte { return (*chunks.Get().(*[]byte))[:0] }

func putChunk(b []byte) {
	if cap(b) == chunkSize {
		b = b[:0]
		chunks.Put(&b)
	}
}

// Conn is a client SPDY/3.1 connection.
type Conn struct {
	nc net.Conn
	br *bufio.Reader

	// framer decodes control frames from br (only the read loop reads) and
	// encodes those crisp sends, but SYN_STREAM, into wbuf (under wmu).
	framer *spdy.Framer
	wmu    writeLock
	wbuf   bytes.Buffer
	hdr    [8]byte // a DATA frame header, under wmu
	nextID uint32  // the next stream's id, under wmu: ids go out in order
	werr   error   // the first failed write, under wmu
	// headersStarted: the zlib stream of the header blocks crisp sends has
	// begun (synstream.go; under wmu).
	headersStarted bool

	mu       sync.Mutex
	streams  map[uint32]*Stream
	err      error // why the connection ended; nil while it runs
	goneAway bool
	closed   chan bool

	// filling are the streams whose last chunk the read loop is still
	// filling (read loop only).
	filling []*Stream
	// burst counts the DATA bytes read since the read loop last waited on
	// the network (read loop only).
	burst int
	// pause is bulkPause, or $CRISP_SPDY_BULK_PAUSE's.
	pause time.Duration

	idleTimeout   atomic.Int64 // nanoseconds; 0: none
	createTimeout atomic.Int64 // nanoseconds
	// overrunWait: how long the read loop waits for a stream whose reader
	// fell maxBacklog behind to read again before it drops that stream
	// (nanoseconds; 0: it waits for good). See SetOverrunWait.
	overrunWait  atomic.Int64
	lastActivity atomic.Int64  // unix nanoseconds of the last frame either way
	pingID       atomic.Uint32 // the pings sent, times two (Ping)
}

// New starts a client connection on nc, the connection an upgrade answered
// with 101. br, when not nil, is the reader the answer was read through: the
// bytes it holds past the answer are read first. pingPeriod > 0 sends a ping
// that often, to keep NATs and proxies from dropping an idle session.
func New(nc net.Conn, br *bufio.Reader, pingPeriod time.Duration) (*Conn, error) {
	var src io.Reader = nc
	if br != nil && br.Buffered() > 0 {
		src = io.MultiReader(io.LimitReader(br, int64(br.Buffered())), nc)
	}
	c := &Conn{
		nc:      nc,
		br:      bufio.NewReaderSize(src, readBufferSize),
		nextID:  1,
		streams: map[uint32]*Stream{},
		closed:  make(chan bool),
		wmu:     newWriteLock(),
		pause:   bulkPauseFromEnv(),
	}
	c.createTimeout.Store(int64(defaultCreateTimeout))
	framer, err := spdy.NewFramerWithOptions(&c.wbuf, c.br, framerLimits...)
	if err != nil {
		return nil, err
	}
	c.framer = framer
	c.touch()
	go c.readLoop()
	if pingPeriod > 0 {
		go c.ping(pingPeriod)
	}
	return c, nil
}

var _ httpstream.Connection = (*Conn)(nil)

// bulkPauseFromEnv is bulkPause unless $CRISP_SPDY_BULK_PAUSE names a
// valid duration.
func bulkPauseFromEnv() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("CRISP_SPDY_BULK_PAUSE")); err == nil && d >= 0 {
		return d
	}
	return bulkPause
}

// CreateStream opens a stream with headers and waits for the server's reply.
func (c *Conn) CreateStream(headers http.Header) (httpstream.Stream, error) {
	s := newStream(c, headers)
	c.wmu.Lock()
	c.mu.Lock()
	if err := c.usable(); err != nil {
		c.mu.Unlock()
		c.wmu.Unlock()
		return nil, err
	}
	s.id = c.nextID
	c.nextID += 2
	c.streams[s.id] = s
	c.mu.Unlock()
	frame, err := appendSynStream(c.wbuf.AvailableBuffer(), s.id, headers, !c.headersStarted)
	if err == nil {
		c.headersStarted = true
		err = c.writeLocked(frame)
	}
	c.wmu.Unlock()
	if err != nil {
		c.forget(s)
		return nil, err
	}
	wait := time.Duration(c.createTimeout.Load())
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-s.replied:
	case <-t.C:
		_ = s.Reset() // the server may still answer: tell it not to bother
		return nil, fmt.Errorf("%w: no reply within %s", ErrCreateTimeout, wait)
	}
	if s.replyErr != nil {
		c.forget(s)
		return nil, s.replyErr
	}
	return s, nil
}

// usable is nil while streams can be opened (c.mu held).
func (c *Conn) usable() error {
	if c.err != nil {
		return c.err
	}
	if c.goneAway {
		return errors.New("the server is going away: no new streams")
	}
	return nil
}

// Close resets the open streams, says goodbye and closes the connection.
func (c *Conn) Close() error {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil
	}
	open := make([]*Stream, 0, len(c.streams))
	for _, s := range c.streams {
		if !s.removed.Load() && s.accepted() { // see Reset: no reset before a reply
			open = append(open, s)
		}
	}
	c.mu.Unlock()
	// The deadline first: it also ends a write blocked on a peer that
	// stopped reading, which then gives up the write lock.
	_ = c.nc.SetWriteDeadline(time.Now().Add(closeWriteTimeout))
	if c.wmu.lockWithin(closeWriteTimeout) {
		for _, s := range open {
			_ = c.writeControlLocked(&spdy.RstStreamFrame{StreamId: spdy.StreamId(s.id), Status: spdy.Cancel}) // best effort: the connection closes next
		}
		_ = c.writeControlLocked(&spdy.GoAwayFrame{Status: spdy.GoAwayOK}) // likewise
		c.wmu.Unlock()
	}
	c.shut(errClosed)
	return nil
}

// SetCreateTimeout bounds the wait for the server's reply to a new stream
// (default 30s); past it CreateStream fails with ErrCreateTimeout.
func (c *Conn) SetCreateTimeout(timeout time.Duration) {
	if timeout > 0 {
		c.createTimeout.Store(int64(timeout))
	}
}

// SetOverrunWait makes a stream whose reader is maxBacklog behind and has
// read nothing for wait fail with ErrOverrun (the server is told with a
// reset), so the read loop carries on for the other streams. SPDY as the
// CRI servers speak it has no flow control per stream: without this (wait
// 0, the default, right for exec and attach, whose streams are one
// session) the read loop waits for that reader however long it takes, and
// every stream of the connection waits with it.
//
// It may change while the connection runs (port-forward turns it on only
// while a stream has siblings to hold up): a stream waiting for its reader
// is woken to apply the new wait, counted from its reader's last read.
func (c *Conn) SetOverrunWait(wait time.Duration) {
	if time.Duration(c.overrunWait.Swap(int64(wait))) == wait {
		return
	}
	c.mu.Lock()
	streams := make([]*Stream, 0, len(c.streams))
	for _, s := range c.streams {
		streams = append(streams, s)
	}
	c.mu.Unlock()
	for _, s := range streams {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	}
}

// CloseChan is closed when the connection ends, from either side.
func (c *Conn) CloseChan() <-chan bool { return c.closed }

// Err is why the connection ended (errClosed for an orderly close by
// either side, else the read's error, a reset say); nil while it is open.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// SetIdleTimeout closes the connection once no frame went either way for
// timeout; 0 turns that off.
func (c *Conn) SetIdleTimeout(timeout time.Duration) {
	old := c.idleTimeout.Swap(int64(timeout))
	if timeout > 0 && old == 0 {
		c.touch()
		go c.watchIdle()
	}
}

// RemoveStreams takes streams the caller is done with off the list Close
// resets. Their data still arrives (as with spdystream, where this only
// touches k8s.io/streaming's list): client-go removes the error stream of a
// v1 session before crisp has read its late exit text.
func (c *Conn) RemoveStreams(streams ...httpstream.Stream) {
	for _, hs := range streams {
		if s, ok := hs.(*Stream); ok && s.conn == c {
			s.removed.Store(true)
		}
	}
}

func (c *Conn) forget(s *Stream) {
	c.mu.Lock()
	delete(c.streams, s.id)
	c.mu.Unlock()
}

func (c *Conn) touch() { c.lastActivity.Store(time.Now().UnixNano()) }

func (c *Conn) watchIdle() {
	for {
		timeout := time.Duration(c.idleTimeout.Load())
		if timeout <= 0 {
			return
		}
		idle := time.Since(time.Unix(0, c.lastActivity.Load()))
		wait := timeout - idle
		if wait <= 0 {
			c.shut(errors.New("SPDY connection idle for " + timeout.String()))
			return
		}
		select {
		case <-c.closed:
			return
		case <-time.After(wait):
		}
	}
}

func (c *Conn) ping(period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-c.closed:
			return
		case <-t.C:
		}
		if err := c.Ping(); err != nil {
			return
		}
	}
}

// Ping sends a PING frame; the server echoes it (read as any frame: its
// arrival is the sign of life transport/liveness waits for).
func (c *Conn) Ping() error {
	id := c.pingID.Add(2) - 1 // a client's pings are odd
	return c.writeControl(&spdy.PingFrame{Id: id & 0x7fffffff})
}

// shut ends the connection once: every stream's reader sees the end of its
// data, a pending CreateStream fails, and nc is closed.
func (c *Conn) shut(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	streams := c.streams
	c.streams = map[uint32]*Stream{}
	close(c.closed)
	c.mu.Unlock()
	for _, s := range streams {
		// A stream still waiting for its reply learns why the
		// connection ended (a refused frame, say).
		s.reply(err)
		// Like spdystream, a lost connection reads as the end of each
		// stream's data (client-go logs any other error as unhandled);
		// writes fail.
		s.remoteEnd(errClosed, io.EOF)
	}
	_ = c.nc.Close() // the end of the connection: nothing to tell anyone
}

// writeControl encodes f and writes it.
func (c *Conn) writeControl(f spdy.Frame) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.writeControlLocked(f)
}

// writeControlLocked encodes f and writes it (wmu held).
func (c *Conn) writeControlLocked(f spdy.Frame) error {
	c.wbuf.Reset()
	if err := c.framer.WriteFrame(f); err != nil {
		return err
	}
	return c.writeLocked(c.wbuf.Bytes())
}

// writeLocked writes bufs to the connection (wmu held).
func (c *Conn) writeLocked(bufs ...[]byte) error {
	if c.werr != nil {
		return c.werr
	}
	var err error
	if len(bufs) == 1 {
		_, err = c.nc.Write(bufs[0])
	} else {
		nb := net.Buffers(bufs)
		_, err = nb.WriteTo(c.nc)
	}
	if err != nil {
		// Writing failed (the peer closed or reset): later writes fail
		// at once, but what the peer sent before is still read, to its
		// end (a v1 session's exit text comes after stdout ends).
		c.werr = fmt.Errorf("writing to the SPDY connection: %w", err)
		return c.werr
	}
	c.touch()
	return nil
}

// writeData sends p (any length) on stream id, fin on the last frame.
func (c *Conn) writeData(id uint32, p []byte, fin bool) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for {
		n := min(len(p), maxDataLength)
		last := n == len(p)
		binary.BigEndian.PutUint32(c.hdr[:4], id&0x7fffffff)
		c.hdr[4] = 0
		if last && fin {
			c.hdr[4] = byte(spdy.DataFlagFin)
		}
		c.hdr[5], c.hdr[6], c.hdr[7] = byte(n>>16), byte(n>>8), byte(n)
		var err error
		if n <= smallWrite {
			c.wbuf.Reset()
			c.wbuf.Write(c.hdr[:])
			c.wbuf.Write(p[:n])
			err = c.writeLocked(c.wbuf.Bytes())
		} else {
			err = c.writeLocked(c.hdr[:], p[:n])
		}
		if err != nil || last {
			return err
		}
		p = p[n:]
	}
}
