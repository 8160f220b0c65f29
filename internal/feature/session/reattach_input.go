package session

import (
	"bytes"
	"io"
	"sync"
)

// LeasedInput carries one stdin across the sessions of an attach. Each session's
// copy of stdin to the stream is a goroutine blocked in Read; when the
// session breaks off, that goroutine is still waiting, and a plain reader
// would hand it the next thing typed, to be written to the dead stream and
// lost. LeasedInput reads the real stdin on one goroutine of its own and hands
// what it reads to the session that holds the current Lease; an ended
// lease's Read returns io.EOF having taken nothing.
type LeasedInput struct {
	r     io.Reader
	start sync.Once
	// chunks carries what the reader read, one Read's worth at a time; it
	// is closed after the reader's last Read, err holding its error.
	chunks chan []byte
	err    error

	// readMu makes the leases read one at a time, so that what is left of
	// a chunk (carry) goes out before the next chunk.
	readMu sync.Mutex
	carry  []byte // the part of a chunk that did not fit the last Read
}

// NewLeasedInput returns a LeasedInput over r; it starts reading r when the first lease
// is taken, and stops when r ends.
func NewLeasedInput(r io.Reader) *LeasedInput {
	return &LeasedInput{r: r, chunks: make(chan []byte)}
}

// Lease returns a reader of the input for one session. End it when the
// session is over, before taking the next lease.
func (in *LeasedInput) Lease() *Lease {
	in.start.Do(func() { go in.pump() })
	return &Lease{in: in, ended: make(chan struct{})}
}

// pump reads the input until it ends, each chunk handed to one lease.
func (in *LeasedInput) pump() {
	buf := make([]byte, 32<<10)
	for {
		n, err := in.r.Read(buf)
		if n > 0 {
			in.chunks <- bytes.Clone(buf[:n]) // keystrokes come a few bytes at a time
		}
		if err != nil {
			in.err = err
			close(in.chunks) // publishes err to the leases' receives
			return
		}
	}
}

// Lease is one session's reader of a LeasedInput.
type Lease struct {
	in    *LeasedInput
	ended chan struct{}
	once  sync.Once
}

// Read returns input not taken by an earlier lease; io.EOF once the lease
// has ended, or the input's own error once it has none left.
func (l *Lease) Read(p []byte) (int, error) {
	in := l.in
	// Held while waiting: the lease before this one has ended (the
	// caller ends a lease before it takes the next), so its Read is over.
	in.readMu.Lock()
	defer in.readMu.Unlock()
	select {
	case <-l.ended:
		return 0, io.EOF
	default:
	}
	if len(in.carry) > 0 {
		n := copy(p, in.carry)
		in.carry = in.carry[n:]
		return n, nil
	}
	select {
	case <-l.ended:
		return 0, io.EOF
	case chunk, ok := <-in.chunks:
		if !ok {
			return 0, in.err
		}
		n := copy(p, chunk)
		in.carry = chunk[n:]
		return n, nil
	}
}

// End ends the lease: a Read blocked in it returns io.EOF.
func (l *Lease) End() { l.once.Do(func() { close(l.ended) }) }
