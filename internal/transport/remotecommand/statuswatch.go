package remotecommand

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/streaming/pkg/httpstream"

	"github.com/crisp-cri/crisp/internal/transport"
)

// statusWatch observes the error stream of a SPDY exec or attach session,
// the one channel on which the server says how the command ended.
//
// A v4 or v5 server always ends a session with a status on the error stream,
// {"status":"Success"} included. client-go's SPDY executor treats an error
// stream that closes empty as success, so a runtime that drops the
// connection mid-output would look like a clean exit 0 with truncated
// output. statusWatch records whether any status arrived so the session can
// tell a cut from a success. (client-go's WebSocket executor already reports
// a cut as an error.)
//
// A v1 (channel.k8s.io) server sends an error text only on failure, after
// the command's output, and client-go's v1 handler returns as soon as stdout
// and stderr end, then resets the error stream and closes the connection:
// the text, which usually arrives just after stdout closes, is lost and a
// failed command looks like exit 0 (and when the text does reach client-go,
// its reader goroutine may block forever on a channel nobody reads). So on
// v1 statusWatch holds the error stream: client-go's reader sees an empty
// stream that ends when the server ends it (so it never blocks), the text is
// kept here, and client-go's Reset of the stream and Close of the connection
// are deferred until the session has waited for the text (awaitText) and
// released them (release). v2 and v3 are not held: client-go reads their
// error stream to its end before it returns. On WebSocket channel.k8s.io,
// where client-go runs the same v1 handler, wsStatusFilter holds the error
// channel into the same watch (statuswatch_ws.go).
type statusWatch struct {
	seen atomic.Bool
	// tooLong: a WebSocket error channel went past maxStatus and the
	// filter cut the connection (statuswatch_ws.go).
	tooLong atomic.Bool

	bound statusBound // statusbound.go: v2-v5's error stream

	hold    bool          // v1: set before client-go sees the connection
	ended   chan struct{} // held: closed when the error stream ended
	endOnce sync.Once
	relOnce sync.Once

	mu       sync.Mutex
	conn     httpstream.Connection // the session's connection (wrap)
	closers  []func() error        // held: what client-go asked for, done by release
	text     []byte                // held: what the error stream carried
	readErr  error                 // held: why it ended, when not at EOF
	released bool
}

// holdV1 starts holding: the connection speaks v1.
func (w *statusWatch) holdV1() {
	w.hold = true
	w.ended = make(chan struct{})
}

// deferClose registers a close that release does.
func (w *statusWatch) deferClose(f func() error) {
	w.mu.Lock()
	w.closers = append(w.closers, f)
	w.mu.Unlock()
}

// record keeps what a held error stream carried, up to maxErrorText.
func (w *statusWatch) record(p []byte) {
	w.mu.Lock()
	if room := maxErrorText - len(w.text); room > 0 {
		w.text = append(w.text, p[:min(len(p), room)]...)
	}
	w.mu.Unlock()
}

// maxErrorText bounds what crisp keeps of a v1 error text.
const maxErrorText = 64 << 10

// errorTextWait bounds how long a v1 session waits, once stdout and stderr
// have ended, for the server to end the error stream: a server sends the
// text right after the output, then closes the connection.
const errorTextWait = 2 * time.Second

// statusCarrying reports whether the protocol's servers always send a
// final status: those with an exit code (v4 and v5; v1-v3 send one only on
// failure).
func (p protocolSpec) statusCarrying() bool { return p.known && p.Caps.ExitCode }

// wrap returns conn, negotiated for protocol, with its error stream
// observed (and held, on v1).
func (w *statusWatch) wrap(conn httpstream.Connection, protocol string) httpstream.Connection {
	w.mu.Lock()
	w.conn = conn
	w.mu.Unlock()
	if protocol == transport.ExecProtocolV1 {
		w.holdV1()
		w.deferClose(conn.Close)
	}
	return &watchedConn{Connection: conn, watch: w}
}

// connEnd is why the session's SPDY connection ended, when its connection
// says (crisp's own does: spdyconn.Conn.Err); nil otherwise.
func (w *statusWatch) connEnd() error {
	w.mu.Lock()
	conn := w.conn
	w.mu.Unlock()
	if e, ok := conn.(interface{ Err() error }); ok {
		return e.Err()
	}
	return nil
}

// awaitText waits, on a held error stream, until the server ended it, ctx
// is done or errorTextWait passed, and returns the text it carried and, when
// it ended otherwise than at EOF, why. It returns nothing unless held.
func (w *statusWatch) awaitText(ctx context.Context) (string, error) {
	if !w.hold {
		return "", nil
	}
	t := time.NewTimer(errorTextWait)
	defer t.Stop()
	select {
	case <-w.ended:
	case <-ctx.Done():
	case <-t.C:
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.text), w.readErr
}

// release does what client-go asked of a held error stream and connection:
// it resets the stream and closes the connection. Once; a no-op unless held.
// The session calls it on every way out of an attempt.
func (w *statusWatch) release() {
	if !w.hold {
		return
	}
	w.relOnce.Do(func() {
		w.mu.Lock()
		w.released = true
		closers := w.closers
		w.mu.Unlock()
		for i := len(closers) - 1; i >= 0; i-- { // the stream before its connection
			_ = closers[i]() // closing what the session is done with: the session already has its outcome
		}
	})
}

// end notes that a held error stream ended (a no-op unless held: the
// WebSocket filter also reads unheld, bounded sessions).
func (w *statusWatch) end(err error) {
	if !w.hold {
		return
	}
	w.endOnce.Do(func() {
		w.mu.Lock()
		if !errors.Is(err, io.EOF) && !w.released {
			w.readErr = err
		}
		w.mu.Unlock()
		close(w.ended)
	})
}

type watchedConn struct {
	httpstream.Connection
	watch *statusWatch
}

func (c *watchedConn) CreateStream(headers http.Header) (httpstream.Stream, error) {
	stream, err := c.Connection.CreateStream(headers)
	if err != nil {
		return stream, err
	}
	switch headers.Get("streamType") {
	case "error":
	case "stdout", "stderr":
		if !c.watch.hold {
			return c.watch.bound.output(stream), nil
		}
		return stream, nil
	default:
		return stream, nil
	}
	if c.watch.hold {
		c.watch.deferClose(stream.Reset)
	} else {
		c.watch.bound.mu.Lock()
		c.watch.bound.errStr = stream
		c.watch.bound.mu.Unlock()
	}
	return &watchedStream{Stream: stream, watch: c.watch}, nil
}

// Close is deferred on a held connection until release.
func (c *watchedConn) Close() error {
	if c.watch.hold {
		return nil
	}
	return c.Connection.Close()
}

type watchedStream struct {
	httpstream.Stream
	watch *statusWatch
	read  int // bytes read, not held
}

func (s *watchedStream) Read(p []byte) (int, error) {
	w := s.watch
	if !w.hold {
		n, err := w.bound.readBounded(s.Stream, &s.read, p)
		if n > 0 {
			w.seen.Store(true)
		}
		return n, err
	}
	// Held: keep the text, hand client-go an empty stream that ends when
	// the real one does.
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := s.Stream.Read(p)
		if n > 0 {
			w.seen.Store(true)
			w.record(p[:n])
		}
		if err != nil {
			w.end(err)
			return 0, io.EOF
		}
	}
}

// Reset is deferred on a held stream until release.
func (s *watchedStream) Reset() error {
	if s.watch.hold {
		return nil
	}
	return s.Stream.Reset()
}
