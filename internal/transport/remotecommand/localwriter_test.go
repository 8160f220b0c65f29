package remotecommand

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/transport"
)

// slowWriter takes its time, so that a write is in flight when close comes.
type slowWriter struct {
	buf     bytes.Buffer
	entered chan struct{} // closed by the first write, as it begins
}

func (w *slowWriter) Write(p []byte) (int, error) {
	if w.buf.Len() == 0 {
		close(w.entered)
	}
	time.Sleep(100 * time.Millisecond)
	return w.buf.Write(p)
}

// Once the session returned, its local writer lets nothing more through,
// and close waits for the write in flight: the caller may read what it
// gave as stdout as soon as the session returns.
func TestLocalWriterTakesNothingAfterClose(t *testing.T) {
	w := &slowWriter{entered: make(chan struct{})}
	f := &fence{}
	l := &localWriter{w: w, name: "stdout", fence: f}
	go func() { _, _ = l.Write([]byte("in flight")) }()
	<-w.entered // the write is in flight
	f.close()
	if got := w.buf.String(); got != "in flight" {
		t.Fatalf("after close the caller's writer holds %q, want the write in flight finished", got)
	}
	if _, err := l.Write([]byte("late")); !errors.Is(err, errSessionReturned) {
		t.Fatalf("a write after close: %v, want errSessionReturned", err)
	}
	if got := w.buf.String(); got != "in flight" {
		t.Fatalf("a write after close reached the caller's writer: %q", got)
	}
	if err := l.failed(); err != nil {
		t.Fatalf("a refused late write counts as crisp's own write failure: %v", err)
	}
}

// stdin's end read after the session returned (client-go's stdin goroutine
// outlives the session) leaves the caller's warning and trace sinks alone;
// read before, it warns once that WebSocket v4 cannot pass it on.
func TestStdinEndAfterSessionReturnedIsQuiet(t *testing.T) {
	for _, returned := range []bool{false, true} {
		pr, pw := io.Pipe()
		var warned atomic.Int32
		var trace bytes.Buffer
		cfg := transport.Config{Trace: &trace, Warnf: func(string, ...any) { warned.Add(1) }}
		sess := newSession("exec", cfg, Streams{Stdin: pr, Stdout: io.Discard})
		sess.accepted = transport.Attempt{Offer: transport.Offer{Transport: transport.WebSocket}, Protocol: transport.ExecProtocolV4}
		sess.acceptedSpec = lookupSpec(transport.Protocol{Transport: transport.WebSocket, Name: transport.ExecProtocolV4})
		read := make(chan error, 1)
		go func() {
			_, err := sess.s.Stdin.Read(make([]byte, 8))
			read <- err
		}()
		time.Sleep(20 * time.Millisecond) // the read is waiting on stdin
		if returned {
			sess.end()
		}
		_ = pw.Close()
		if err := <-read; !errors.Is(err, io.EOF) {
			t.Fatalf("returned=%v: read %v, want EOF", returned, err)
		}
		want := int32(1)
		if returned {
			want = 0
		}
		if got := warned.Load(); got != want {
			t.Errorf("returned=%v: warned %d times, want %d", returned, got, want)
		}
		if traced := strings.Contains(trace.String(), "end of input"); traced != !returned {
			t.Errorf("returned=%v: trace %q", returned, trace.String())
		}
	}
}
