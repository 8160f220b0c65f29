package spdyconn

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/moby/spdystream/spdy"
)

// FuzzServerBytes feeds arbitrary bytes to a connection as the server's
// side: whatever they hold, the client neither panics nor hangs, and a
// stream it opened ends (with its data or without).
func FuzzServerBytes(f *testing.F) {
	for _, seed := range serverSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		nc := &scriptedConn{in: bytes.NewReader(input), start: make(chan struct{})}
		c, err := New(nc, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			s, err := c.CreateStream(http.Header{"Streamtype": {"stdout"}})
			if err == nil {
				_, _ = io.Copy(io.Discard, s)
			}
		}()
		// The server speaks once stream 1 exists, as a real one would.
		for registered := false; !registered; time.Sleep(time.Millisecond) {
			c.mu.Lock()
			registered = c.streams[1] != nil
			c.mu.Unlock()
		}
		close(nc.start)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the stream did not end after the server's bytes ran out")
		}
		select {
		case <-c.CloseChan():
		case <-time.After(10 * time.Second):
			t.Fatal("the connection did not end after the server's bytes ran out")
		}
	})
}

// serverSeeds are well-formed server answers: a reply, data in two frames
// and the end; a reset; a ping and a go-away.
func serverSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	var out [][]byte
	frame := func(frames ...spdy.Frame) []byte {
		var b bytes.Buffer
		fr, err := spdy.NewFramer(&b, nil)
		if err != nil {
			tb.Fatal(err)
		}
		for _, f := range frames {
			if err := fr.WriteFrame(f); err != nil {
				tb.Fatal(err)
			}
		}
		return b.Bytes()
	}
	out = append(out,
		frame(&spdy.SynReplyFrame{StreamId: 1, Headers: http.Header{}},
			&spdy.DataFrame{StreamId: 1, Data: []byte("hello ")},
			&spdy.DataFrame{StreamId: 1, Data: []byte("world"), Flags: spdy.DataFlagFin}),
		frame(&spdy.RstStreamFrame{StreamId: 1, Status: spdy.Cancel}),
		frame(&spdy.PingFrame{Id: 2}, &spdy.GoAwayFrame{Status: spdy.GoAwayOK}),
		frame(&spdy.SynReplyFrame{StreamId: 1, Headers: http.Header{}},
			&spdy.WindowUpdateFrame{StreamId: 1, DeltaWindowSize: 1},
			&spdy.DataFrame{StreamId: 3, Data: []byte("not ours")},
			&spdy.SynStreamFrame{StreamId: 2, Headers: http.Header{}}),
	)
	// Past crisp's bounds (limits.go): a header block inflating to one
	// header of 1 MiB, and one of 200 headers.
	out = append(out, headerBomb(tb, 1, 1<<20), headerBomb(tb, 200, 16))
	return out
}

// scriptedConn is a server that says in (once start is closed) and takes
// anything written.
type scriptedConn struct {
	in    *bytes.Reader
	start chan struct{}
}

func (c *scriptedConn) Read(p []byte) (int, error) {
	<-c.start
	return c.in.Read(p)
}

func (c *scriptedConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c *scriptedConn) Close() error                     { return nil }
func (c *scriptedConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *scriptedConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *scriptedConn) SetDeadline(time.Time) error      { return nil }
func (c *scriptedConn) SetReadDeadline(time.Time) error  { return nil }
func (c *scriptedConn) SetWriteDeadline(time.Time) error { return nil }
