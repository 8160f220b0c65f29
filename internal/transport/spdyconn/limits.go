package spdyconn

import (
	"errors"
	"fmt"
	"time"

	"github.com/moby/spdystream/spdy"
)

// Bounds on what a server's control frames may make crisp hold. spdystream's
// framer allows 1000 headers of 1 MiB each by default: a SYN_REPLY of a few
// KiB whose header block inflates to that took a client past a GiB. The CRI
// servers reply with no headers at all; these leave room for any real one.
const (
	// maxControlPayload bounds a control frame's payload as sent
	// (compressed).
	maxControlPayload = 64 << 10
	// maxHeaderCount and maxHeaderField bound a header block once
	// inflated: at most 2*64*16 KiB (2 MiB) per frame.
	maxHeaderCount = 64
	maxHeaderField = 16 << 10
)

var framerLimits = []spdy.FramerOption{
	spdy.WithMaxControlFramePayloadSize(maxControlPayload),
	spdy.WithMaxHeaderCount(maxHeaderCount),
	spdy.WithMaxHeaderFieldSize(maxHeaderField),
}

// ErrFrameRefused marks a control frame past the bounds above (or
// malformed): the connection ends with it.
var ErrFrameRefused = errors.New("the streaming server sent a SPDY control frame crisp refuses")

// controlFrameError says why reading a control frame failed: a frame past
// crisp's bounds is the server's fault, named as such.
func controlFrameError(err error) error {
	var se *spdy.Error
	if errors.As(err, &se) {
		return fmt.Errorf("%w (a frame is held to %d KiB, a header block to %d headers of %d KiB): %w",
			ErrFrameRefused, maxControlPayload>>10, maxHeaderCount, maxHeaderField>>10, err)
	}
	return fmt.Errorf("reading a SPDY control frame: %w", err)
}

// writeLock serialises writes to the connection. It is a channel rather
// than a mutex so Close can wait for it with a bound: a writer blocked on a
// peer that stopped reading holds it until the write deadline Close sets
// ends that write.
type writeLock chan struct{}

func newWriteLock() writeLock { return make(writeLock, 1) }

func (l writeLock) Lock()   { l <- struct{}{} }
func (l writeLock) Unlock() { <-l }

// lockWithin takes the lock unless it stays held for wait.
func (l writeLock) lockWithin(wait time.Duration) bool {
	select {
	case l <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case l <- struct{}{}:
		return true
	case <-t.C:
		return false
	}
}
