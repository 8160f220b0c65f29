package transport

import (
	"sync"
	"time"

	"github.com/crisp-cri/crisp/internal/base/tracefile"
)

// FileTrace is one session's side of a --trace-file: the frames -vv prints,
// as structured events with their payloads, plus the handshakes.
// remotecommand's tracer and portforward's Forwarder feed it. A nil
// *FileTrace records nothing, so callers need no checks.
type FileTrace struct {
	w       *tracefile.Writer
	session int
	op      string

	mu        sync.Mutex
	transport string
	closed    bool
	rpc       time.Duration // of the attempt under way (set before its handshake)
}

// NewFileTrace starts a session named op in cfg.TraceFile; nil without one.
func NewFileTrace(cfg Config, op string) *FileTrace {
	if cfg.TraceFile == nil {
		return nil
	}
	return &FileTrace{w: cfg.TraceFile, session: cfg.TraceFile.NewSession(), op: op}
}

// SetRPC notes how long the URL of the attempt under way took to get, for
// its handshake event (which is recorded before the session's frames).
func (f *FileTrace) SetRPC(d time.Duration) {
	if f == nil {
		return
	}
	f.mu.Lock()
	f.rpc = d
	f.mu.Unlock()
}

func (f *FileTrace) record(ev tracefile.Event) {
	ev.Session, ev.Op = f.session, f.op
	if ev.Kind == tracefile.KindFrame || ev.Kind == tracefile.KindOpen || ev.Kind == tracefile.KindEnd {
		f.mu.Lock()
		ev.Transport = f.transport
		f.mu.Unlock()
	}
	f.w.Record(ev)
}

// Handshake records one negotiation attempt; an accepted one names the
// transport of the frames that follow.
func (f *FileTrace) Handshake(att Attempt) {
	if f == nil {
		return
	}
	ev := tracefile.Event{
		Kind: tracefile.KindHandshake, URL: att.URL, Transport: att.Transport.Title(),
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
	if att.Err == nil {
		f.transport = ev.Transport
	}
	f.mu.Unlock()
	f.record(ev)
}

// Frame records one exec/attach frame: dir is "->" (to the runtime) or
// "<-", stream stdin, stdout or stderr.
func (f *FileTrace) Frame(dir, stream string, p []byte) {
	if f == nil {
		return
	}
	f.record(tracefile.Event{Kind: tracefile.KindFrame, Dir: fileDir(dir), Stream: stream, Size: len(p), Data: p})
}

// Resize records a terminal size sent.
func (f *FileTrace) Resize(width, height uint16) {
	if f == nil {
		return
	}
	f.record(tracefile.Event{Kind: tracefile.KindFrame, Dir: tracefile.DirSend, Stream: tracefile.StreamResize, Width: width, Height: height})
}

// Exit records the exit status the error stream carried.
func (f *FileTrace) Exit(code int) {
	if f == nil {
		return
	}
	f.record(tracefile.Event{Kind: tracefile.KindFrame, Dir: tracefile.DirRecv, Stream: tracefile.StreamError, ExitCode: &code})
}

// Close records that a side ("local" or "remote") ended a stream (stdin)
// or the whole session (stream "close"); the session's end is recorded once.
func (f *FileTrace) Close(by, stream string) {
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

// ForwardFrame records one port-forward data frame of connection req to
// the remote port.
func (f *FileTrace) ForwardFrame(dir string, p []byte, port uint16, req int64) {
	if f == nil {
		return
	}
	f.record(tracefile.Event{Kind: tracefile.KindFrame, Dir: fileDir(dir), Stream: tracefile.StreamData, Size: len(p), Data: p, Port: int(port), Request: req})
}

// ForwardClose records that a side ("local" or "remote") ended its half of
// port-forward connection req to the remote port.
func (f *FileTrace) ForwardClose(by string, port uint16, req int64) {
	if f == nil {
		return
	}
	f.record(tracefile.Event{Kind: tracefile.KindClose, Stream: tracefile.StreamData, By: by, Port: int(port), Request: req})
}

// ForwardOpen records that port-forward accepted connection req from the
// local client at peer, for the remote port.
func (f *FileTrace) ForwardOpen(peer string, port uint16, req int64) {
	if f == nil {
		return
	}
	f.record(tracefile.Event{Kind: tracefile.KindOpen, Peer: peer, Port: int(port), Request: req})
}

// ConnEnd is how a forwarded connection ended, for ForwardEnd.
type ConnEnd struct {
	// How is a tracefile.End* value.
	How string
	// Reason says why crisp reset the connection; Err why it failed.
	Reason string
	Err    error
	// Sent and Received count the bytes passed to and from the remote port.
	Sent, Received int64
}

// ForwardEnd records how port-forward connection req to the remote port
// ended.
func (f *FileTrace) ForwardEnd(end ConnEnd, port uint16, req int64) {
	if f == nil {
		return
	}
	ev := tracefile.Event{Kind: tracefile.KindEnd, End: end.How, Reason: end.Reason, BytesSent: end.Sent, BytesRecv: end.Received, Port: int(port), Request: req}
	if end.Err != nil && end.Err.Error() != end.Reason { // a reset's reason may be the failure reported
		ev.Error = end.Err.Error()
	}
	f.record(ev)
}

// ForwardError records a port-forward connection's error-stream message.
func (f *FileTrace) ForwardError(msg string, port uint16, req int64) {
	if f == nil {
		return
	}
	f.record(tracefile.Event{Kind: tracefile.KindFrame, Dir: tracefile.DirRecv, Stream: tracefile.StreamError, Size: len(msg), Data: []byte(msg), Port: int(port), Request: req})
}

func fileDir(dir string) string {
	if dir == "->" {
		return tracefile.DirSend
	}
	return tracefile.DirRecv
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
