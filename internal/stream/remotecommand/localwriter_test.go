package remotecommand

import (
	"bytes"
	"errors"
	"testing"
	"time"
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
	l := &localWriter{w: w, name: "stdout"}
	go func() { _, _ = l.Write([]byte("in flight")) }()
	<-w.entered // the write is in flight
	l.close()
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
