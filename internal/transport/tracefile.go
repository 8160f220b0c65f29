package transport

import (
	"sync"
	"time"

	"github.com/crisp-cri/crisp/internal/tracefile"
)

// fileTrace is the --trace-file side of a session's tracer: the same
// frames -vv prints, as structured events with their payloads, plus the
// handshakes. A nil *fileTrace records nothing.
type fileTrace struct {
	w       *tracefile.Writer
	session int
	op      string

	mu        sync.Mutex
	transport string
	closed    bool
	rpc       time.Duration // of the attempt under way (Stream sets it before the handshake)
}

func (f *fileTrace) setRPC(d time.Duration) {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.rpc = d
	f.mu.Unlock()
}

func newFileTrace(w *tracefile.Writer, op string) *fileTrace {
	if w == nil {
		return nil
	}
	return &fileTrace{w: w, session: w.NewSession(), op: op}
}

// newSessionTracer is the tracer for one exec or attach session: lines on
// cfg.Trace (-vv), events in cfg.TraceFile, or both; nil when neither.
func newSessionTracer(cfg Config, op string, start time.Time) *tracer {
	t := newTracer(cfg.Trace, start)
	ft := newFileTrace(cfg.TraceFile, op)
	if ft == nil {
		return t
	}
	if t == nil {
		t = &tracer{start: start}
	}
	t.file = ft
	return t
}

func (f *fileTrace) record(ev tracefile.Event) {
	if f == nil {
		return
	}
	ev.Session, ev.Op = f.session, f.op
	if ev.Kind == tracefile.KindFrame {
		f.mu.Lock()
		ev.Transport = f.transport
		f.mu.Unlock()
	}
	f.w.Record(ev)
}

// handshake records one negotiation attempt; an accepted one names the
// transport of the frames that follow.
func (f *fileTrace) handshake(att Attempt) {
	if f == nil {
		return
	}
	ev := tracefile.Event{
		Kind: tracefile.KindHandshake, URL: att.URL, Transport: transportName(att.Transport),
		Offered: att.Protocols, Protocol: att.Protocol, Status: att.Status, Reason: att.Reason,
		RPCMillis: millis(att.RPC), UpgradeMillis: millis(att.Upgrade),
	}
	if att.Err != nil {
		ev.Error = att.Err.Error()
	}
	f.mu.Lock()
	if ev.RPCMillis == 0 {
		ev.RPCMillis = millis(f.rpc)
	}
	f.mu.Unlock()
	if att.Err == nil {
		f.mu.Lock()
		f.transport = ev.Transport
		f.mu.Unlock()
	}
	f.record(ev)
}

// frame records one frame: dir is "->" (to the runtime) or "<-".
func (f *fileTrace) frame(dir, stream string, p []byte) {
	if f == nil {
		return
	}
	f.record(tracefile.Event{Kind: tracefile.KindFrame, Dir: fileDir(dir), Stream: stream, Size: len(p), Data: p})
}

func (f *fileTrace) resize(size TerminalSize) {
	if f == nil {
		return
	}
	f.record(tracefile.Event{Kind: tracefile.KindFrame, Dir: tracefile.DirSend, Stream: tracefile.StreamResize, Width: size.Width, Height: size.Height})
}

func (f *fileTrace) exit(code int) {
	if f == nil {
		return
	}
	f.record(tracefile.Event{Kind: tracefile.KindFrame, Dir: tracefile.DirRecv, Stream: tracefile.StreamError, ExitCode: &code})
}

// close records that a side ended a stream (stdin) or the whole session
// (stream "close"); the session's close is recorded once.
func (f *fileTrace) close(by, stream string) {
	if f == nil {
		return
	}
	if stream == tracefile.StreamClose {
		f.mu.Lock()
		done := f.closed
		f.closed = true
		f.mu.Unlock()
		if done {
			return
		}
	}
	f.record(tracefile.Event{Kind: tracefile.KindClose, Stream: stream, By: by})
}

func fileDir(dir string) string {
	if dir == "->" {
		return tracefile.DirSend
	}
	return tracefile.DirRecv
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// forwardFrame records one port-forward data frame of connection req to
// the remote port.
func (f *fileTrace) forwardFrame(dir string, p []byte, port uint16, req int64) {
	if f == nil {
		return
	}
	f.record(tracefile.Event{Kind: tracefile.KindFrame, Dir: fileDir(dir), Stream: tracefile.StreamData, Size: len(p), Data: p, Port: int(port), Request: req})
}

// forwardError records a port-forward connection's error-stream message.
func (f *fileTrace) forwardError(msg string, port uint16, req int64) {
	if f == nil {
		return
	}
	f.record(tracefile.Event{Kind: tracefile.KindFrame, Dir: tracefile.DirRecv, Stream: tracefile.StreamError, Size: len(msg), Data: []byte(msg), Port: int(port), Request: req})
}

// fileTrace is t's file side; nil for a nil tracer.
func (t *tracer) fileTrace() *fileTrace {
	if t == nil {
		return nil
	}
	return t.file
}
