package remotecommand

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"k8s.io/streaming/pkg/httpstream"
)

// Bounds on the error stream of a SPDY exec or attach session (v2-v5; v1's
// is held and capped in statuswatch.go): what a runtime sends there is kept
// whole by client-go (io.ReadAll), and client-go waits for its end however
// long it takes once stdout and stderr have ended.

// maxStatus bounds what the error stream may carry: a status is a few
// hundred bytes of JSON, a v2/v3 error text a line or two.
const maxStatus = 64 << 10

// statusAfterOutput bounds the wait for the error stream's end once every
// output stream has ended: a runtime sends the status when the process
// exits, which is when its output ends unless it closed its output early.
// A variable for tests.
var statusAfterOutput = 30 * time.Second

// errStatusTooLong ends an error stream past maxStatus.
var errStatusTooLong = fmt.Errorf("the runtime sent more than %d KiB on the error stream, where a status takes a few hundred bytes; crisp cut it there", maxStatus>>10)

// ErrNoStatus ends a session whose output ended but whose status never came.
var ErrNoStatus = errors.New("no exit status from the runtime")

// statusBound watches a session's output streams and bounds its error
// stream (watchedConn holds one per connection).
type statusBound struct {
	mu      sync.Mutex
	outputs int // output streams created
	ended   int // of which ended
	errStr  httpstream.Stream
	timer   *time.Timer
	expired bool // the status did not come in time: errStr was reset
	done    bool // the error stream ended
}

// output registers an output stream and returns it wrapped.
func (b *statusBound) output(s httpstream.Stream) httpstream.Stream {
	b.mu.Lock()
	b.outputs++
	b.mu.Unlock()
	return &outputStream{Stream: s, bound: b}
}

// outputEnded counts an output stream's end; the last one starts the wait
// for the status.
func (b *statusBound) outputEnded() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ended++
	if b.ended < b.outputs || b.errStr == nil || b.done || b.timer != nil {
		return
	}
	b.timer = time.AfterFunc(statusAfterOutput, func() {
		b.mu.Lock()
		if b.done {
			b.mu.Unlock()
			return
		}
		b.expired = true
		s := b.errStr
		b.mu.Unlock()
		_ = s.Reset() // ends client-go's read of it; Read says why
	})
}

// errorEnded notes that the error stream ended and reports whether it ended
// because the status was waited for in vain.
func (b *statusBound) errorEnded() (expired bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done = true
	if b.timer != nil {
		b.timer.Stop()
	}
	return b.expired
}

// noStatusError says what happened when the status never came.
func noStatusError() error {
	return fmt.Errorf("%w: the command's output ended %s ago, but the runtime neither sent its exit status nor ended the session; the command may still be running, or the runtime lost it",
		ErrNoStatus, statusAfterOutput)
}

// outputStream is a stdout or stderr stream whose end is counted. WriteTo
// keeps spdyconn's chunked copy (client-go copies with io.Copy).
type outputStream struct {
	httpstream.Stream
	bound *statusBound
	once  sync.Once
}

func (s *outputStream) Read(p []byte) (int, error) {
	n, err := s.Stream.Read(p)
	if err != nil {
		s.once.Do(s.bound.outputEnded)
	}
	return n, err
}

func (s *outputStream) WriteTo(w io.Writer) (int64, error) {
	n, err := io.Copy(w, s.Stream)
	s.once.Do(s.bound.outputEnded)
	return n, err
}

// readBounded reads the error stream for client-go: at most maxStatus in
// all (the rest is refused: the stream is reset), and an end forced by the
// status wait is an error, not an empty status.
func (b *statusBound) readBounded(s httpstream.Stream, read *int, p []byte) (int, error) {
	if room := maxStatus + 1 - *read; len(p) > room {
		p = p[:room]
	}
	n, err := s.Read(p)
	*read += n
	if *read > maxStatus {
		b.errorEnded()
		_ = s.Reset() // the rest goes nowhere
		return n - (*read - maxStatus), errStatusTooLong
	}
	if err != nil && b.errorEnded() {
		return n, noStatusError()
	}
	return n, err
}
