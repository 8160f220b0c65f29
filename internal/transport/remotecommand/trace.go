package remotecommand

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/crisp-cri/crisp/internal/transport"
)

// tracer writes one line per frame (-vv): direction, channel, size and the
// time since the session started. Frames are traced where they meet the
// local streams, so the lines read the same on every transport: a write to
// stdout is one data frame received (the executors copy frame by frame), a
// read from stdin one frame sent. A nil *tracer traces nothing.
type tracer struct {
	mu    sync.Mutex
	w     io.Writer // nil: no -vv lines, only the trace file
	start time.Time
	file  *transport.FileTrace // --trace-file (tracefile.go); nil: none
}

func newTracer(w io.Writer, start time.Time) *tracer {
	if w == nil {
		return nil
	}
	return &tracer{w: w, start: start}
}

// note writes one trace line. dir is "->" (to the runtime) or "<-".
func (t *tracer) note(dir, channel string, id int, what string) {
	if t == nil || t.w == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	_, _ = fmt.Fprintf(t.w, "crisp: frame %s ch%d %-6s %s +%s\n", dir, id, channel, what,
		time.Since(t.start).Round(time.Microsecond))
}

// line writes a trace line that is not a frame (an upgrade on its way).
func (t *tracer) line(format string, args ...any) {
	if t == nil || t.w == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	_, _ = fmt.Fprintf(t.w, "crisp: "+format+" +%s\n", append(args, time.Since(t.start).Round(time.Microsecond))...)
}

func (t *tracer) frame(dir, channel string, id int, p []byte) {
	t.note(dir, channel, id, fmt.Sprintf("%d B", len(p)))
	t.fileTrace().Frame(dir, channel, p)
}

// writer wraps a local output stream; without tracing it is w itself.
func (t *tracer) writer(w io.Writer, channel string, id int) io.Writer {
	if t == nil {
		return w
	}
	return &traceWriter{w: w, t: t, channel: channel, id: id}
}

// sizes wraps a terminal size queue; without tracing it is q itself. Sizes
// that come after the session returned (f closed) end the queue untraced.
func (t *tracer) sizes(q TerminalSizeQueue, f *fence) TerminalSizeQueue {
	if t == nil {
		return q
	}
	return &traceSizes{q: q, t: t, fence: f}
}

type traceWriter struct {
	w       io.Writer
	t       *tracer
	channel string
	id      int
}

func (w *traceWriter) Write(p []byte) (int, error) {
	w.t.frame("<-", w.channel, w.id, p)
	return w.w.Write(p)
}

type traceSizes struct {
	q     TerminalSizeQueue
	t     *tracer
	fence *fence
}

func (s *traceSizes) Next() *TerminalSize {
	size := s.q.Next()
	if size == nil || !s.fence.enter() {
		return nil
	}
	defer s.fence.leave()
	s.t.note("->", "resize", 4, fmt.Sprintf("%dx%d", size.Width, size.Height))
	s.t.fileTrace().Resize(size.Width, size.Height)
	return size
}

// stdinReader is the session's stdin as the executors see it. It traces
// frames, holds stdin open in TTY sessions until the session ends (a runtime
// treats the end of a TTY's stdin as a detach and closes stdout: containerd
// does), and when the negotiated protocol cannot carry end-of-input
// (WebSocket v4) says so once instead of leaving the user waiting silently.
type stdinReader struct {
	r        io.Reader
	sess     *session
	holdOpen bool
	warnOnce sync.Once
}

func (r *stdinReader) Read(p []byte) (int, error) {
	select {
	case <-r.sess.done:
		return 0, io.EOF
	default:
	}
	n, err := r.r.Read(p)
	if !r.sess.fence.enter() {
		// The session has returned: what was read has nowhere to go, and
		// the caller's trace and warning sinks are its own again.
		return 0, io.EOF
	}
	ended := errors.Is(err, io.EOF)
	r.traced(p[:n], ended)
	r.sess.fence.leave()
	if ended && r.holdOpen {
		if n > 0 {
			return n, nil
		}
		<-r.sess.done
		return 0, io.EOF
	}
	return n, err
}

// traced traces what was read and, at the end of input, says once when
// the protocol cannot pass it on.
func (r *stdinReader) traced(p []byte, ended bool) {
	if len(p) > 0 {
		r.sess.tr.frame("->", "stdin", 0, p)
	}
	if !ended || r.holdOpen {
		return
	}
	r.sess.tr.note("->", "stdin", 0, "end of input")
	r.sess.tr.fileTrace().Close("local", "stdin")
	if att, spec := r.sess.negotiated(); att.Accepted() && spec.lacksStdinEOF() {
		r.warnOnce.Do(func() {
			hint := "--transport spdy carries it"
			if att.Transport == transport.SPDY {
				hint = "SPDY " + transport.ExecProtocolV2 + " and later carry it"
			}
			r.sess.cfg.Warn("stdin ended, but %s %s cannot pass end-of-input to the remote process: "+
				"it runs until it exits by itself (Ctrl-C stops crisp); %s", att.Transport.Title(), att.Protocol, hint)
		})
	}
}
