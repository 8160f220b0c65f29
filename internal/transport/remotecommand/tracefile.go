package remotecommand

import (
	"time"

	"github.com/crisp-cri/crisp/internal/transport"
)

// newSessionTracer is the tracer for one exec or attach session: lines on
// cfg.Trace (-vv), events in cfg.TraceFile (--trace-file), or both; nil
// when neither.
func newSessionTracer(cfg transport.Config, op string, start time.Time) *tracer {
	t := newTracer(cfg.Trace, start)
	ft := transport.NewFileTrace(cfg, op)
	if ft == nil {
		return t
	}
	if t == nil {
		t = &tracer{start: start}
	}
	t.file = ft
	return t
}

// fileTrace is t's --trace-file side; nil for a nil tracer.
func (t *tracer) fileTrace() *transport.FileTrace {
	if t == nil {
		return nil
	}
	return t.file
}
