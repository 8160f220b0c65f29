package demo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"sync"

	"github.com/crisp-cri/crisp/internal/transport/remotecommand"
)

// lockedWriter serialises the transcript: commands running in the
// background (attach, port-forward) write while the demo does.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) printf(format string, args ...any) {
	_, _ = fmt.Fprintf(l, format, args...) // the transcript goes to stdout; a failed write there has nowhere to go
}

// capture records what one command prints, passes it on to the transcript,
// and lets the demo wait for a line.
type capture struct {
	out io.Writer

	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

func newCapture(out io.Writer) *capture {
	return &capture{out: out, changed: make(chan struct{})}
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.buf.Write(p)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	return c.out.Write(p)
}

func (c *capture) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// waitFor waits until the output matches re and returns the match.
func (c *capture) waitFor(ctx context.Context, re *regexp.Regexp) (string, error) {
	for {
		c.mu.Lock()
		m := re.FindString(c.buf.String())
		changed := c.changed
		c.mu.Unlock()
		if m != "" {
			return m, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// sizeQueue is a terminal that never resizes: its size once, then
// nothing until close (which ends client-go's resize goroutine).
type sizeQueue struct {
	size remotecommand.TerminalSize
	sent bool
	done chan struct{}
	once sync.Once
}

func newSizeQueue(size remotecommand.TerminalSize) *sizeQueue {
	return &sizeQueue{size: size, done: make(chan struct{})}
}

// Next returns the size the first time, then blocks until close and
// returns nil. client-go calls it from one goroutine.
func (q *sizeQueue) Next() *remotecommand.TerminalSize {
	if !q.sent {
		q.sent = true
		size := q.size
		return &size
	}
	<-q.done
	return nil
}

func (q *sizeQueue) close() { q.once.Do(func() { close(q.done) }) }
