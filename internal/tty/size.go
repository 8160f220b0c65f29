package tty

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/moby/term"
)

// TerminalSize is a terminal's size in character cells. It has the shape of client-go's
// remotecommand.TerminalSize, which this package does not import; convert at the call site:
// remotecommand.TerminalSize{Width: s.Width, Height: s.Height}.
type TerminalSize struct {
	Width  uint16
	Height uint16
}

// Size reports the terminal's current size, read from Out, or from In when Out is not a terminal.
// ok is false when neither is a terminal whose size can be read, or when the size is unset (0x0,
// as on a fresh pseudo-terminal): sending that to a remote terminal would only confuse it.
func (t Terminal) Size() (size TerminalSize, ok bool) {
	for _, stream := range []any{t.Out, t.In} {
		fd, isTerm := t.terminalFd(stream)
		if !isTerm {
			continue
		}
		ws, err := term.GetWinsize(fd)
		if err != nil || ws.Width == 0 || ws.Height == 0 {
			continue
		}
		return TerminalSize{Width: ws.Width, Height: ws.Height}, true
	}
	return TerminalSize{}, false
}

// SizeQueue yields the terminal's size: the current size on the first call to Next, then the new
// size after each SIGWINCH that changed it (signals that arrive before Next is called again are
// coalesced into one entry), and nil once its context is done. It has the shape of client-go's
// remotecommand.TerminalSizeQueue. Next is meant for one consumer; it is safe to call from any
// goroutine. A nil *SizeQueue is valid: its Next returns nil at once.
type SizeQueue struct {
	ctx   context.Context
	size  func() (TerminalSize, bool)
	winch chan os.Signal

	mu      sync.Mutex // serialises Next
	started bool       // the initial size has been looked at
	last    *TerminalSize
}

// MonitorSize starts watching the terminal's size and returns the queue to hand to the streaming
// code, or nil when neither Out nor In is a terminal (nothing to report). It stops watching when
// ctx is done, and Next then returns nil: cancel ctx when the session ends, or the goroutine that
// client-go runs to drain the queue never returns.
func (t Terminal) MonitorSize(ctx context.Context) *SizeQueue {
	_, outOK := t.terminalFd(t.Out)
	_, inOK := t.terminalFd(t.In)
	if !outOK && !inOK {
		return nil
	}
	q := &SizeQueue{
		ctx:   ctx,
		size:  t.Size,
		winch: make(chan os.Signal, 1), // one pending SIGWINCH is all it takes: coalescing
	}
	// Registered now, not on the first Next, so a resize in between is not missed.
	signal.Notify(q.winch, syscall.SIGWINCH)
	context.AfterFunc(ctx, func() { signal.Stop(q.winch) })
	return q
}

// Next returns the terminal's size: at once on the first call (unless the size cannot be read
// yet), then after a SIGWINCH that changed it. It returns nil when the queue's context is done.
func (q *SizeQueue) Next() *TerminalSize {
	if q == nil {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.ctx.Err() != nil {
		return nil
	}
	if !q.started {
		q.started = true
		if s, ok := q.changed(); ok {
			return s
		}
	}
	for {
		select {
		case <-q.ctx.Done():
			return nil
		case <-q.winch:
		}
		if q.ctx.Err() != nil { // both were ready: the end wins
			return nil
		}
		if s, ok := q.changed(); ok {
			return s
		}
	}
}

// changed reads the size and reports it when it differs from the last one returned.
func (q *SizeQueue) changed() (*TerminalSize, bool) {
	s, ok := q.size()
	if !ok || (q.last != nil && *q.last == s) {
		return nil, false
	}
	q.last = &s
	ret := s // the caller may keep or modify what it gets
	return &ret, true
}
