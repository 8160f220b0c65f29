package spdyconn

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/moby/spdystream"
	"go.uber.org/goleak"
	"k8s.io/streaming/pkg/httpstream"
	streamspdy "k8s.io/streaming/pkg/httpstream/spdy"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

func TestMain(m *testing.M) {
	os.Exit(testkit.LeakChecked{M: m, Grace: testkit.LeakGrace, Opts: []goleak.Option{
		// spdystream's server side (the peer here) holds a goroutine up to
		// its close timeout after the connection ends.
		goleak.IgnoreTopFunction("github.com/moby/spdystream.(*Connection).shutdown"),
		testkit.StreamingServerStuck(),
	}}.Run())
}

// tcpPair is a loopback TCP connection: the client's end and the
// server's, both closed when the test ends.
func tcpPair(tb testing.TB) (client, server net.Conn) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer func() { _ = ln.Close() }() // one connection is all it takes
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	server, ok := <-accepted
	if !ok {
		tb.Fatal("accept failed")
	}
	tb.Cleanup(func() {
		_ = client.Close()
		_ = server.Close()
	})
	return client, server
}

// serve is the peer: k8s.io/streaming's SPDY server connection (spdystream,
// as the CRI streaming servers run it) on a loopback TCP connection, each
// accepted stream handed to handle. It returns the client on the other end.
func serve(t *testing.T, handle func(httpstream.Stream)) (*Conn, httpstream.Connection) {
	t.Helper()
	client, server := serveWith(t, handle, func(nc net.Conn) (httpstream.Connection, error) { return New(nc, nil, 0) })
	return client.(*Conn), server
}

// serveWith is serve with the client made by dial.
func serveWith(tb testing.TB, handle func(httpstream.Stream), dial func(net.Conn) (httpstream.Connection, error)) (client, server httpstream.Connection) {
	tb.Helper()
	nc, sc := tcpPair(tb)
	server, err := streamspdy.NewServerConnection(sc, func(s httpstream.Stream, replySent <-chan struct{}) error {
		if s.Headers().Get("refuse") != "" {
			return errors.New("refused by the test")
		}
		go func() {
			<-replySent
			handle(s)
		}()
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	client, err = dial(nc)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = client.Close()
		_ = server.Close()
	})
	return client, server
}

// noHang runs f and returns its error; f still running after 20 s (two
// thirds of defaultCreateTimeout: a wait that reached it still counts as a
// hang) fails the test as hung. 10 s was too short for 8 MiB under -race
// with two make test at once on 2 cores.
func noHang(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("%s hangs", what)
		return nil
	}
}

// echo copies what the client sends back to it, then finishes its side.
func echo(s httpstream.Stream) {
	_, _ = io.Copy(s, s)
	_ = s.Close()
}

func create(t *testing.T, c *Conn, kv ...string) httpstream.Stream {
	t.Helper()
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	s, err := c.CreateStream(h)
	if err != nil {
		t.Fatalf("CreateStream: %v", err)
	}
	return s
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// Data sent comes back whole and in order, through Read and through
// WriteTo, on streams running at once, from one byte to several chunks.
func TestEchoIntegrity(t *testing.T) {
	c, _ := serve(t, echo)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i, size := range []int{1, 4096, chunkSize - 1, chunkSize + 1, 5*chunkSize + 17, 3 << 20} {
		for _, viaWriteTo := range []bool{false, true} {
			s := create(t, c, "n", fmt.Sprint(i))
			want := randomBytes(t, size)
			wg.Add(1)
			go func() {
				defer wg.Done()
				go func() {
					for p := want; len(p) > 0; { // odd-sized writes
						n := min(len(p), 7000)
						if _, err := s.Write(p[:n]); err != nil {
							errs <- err
							return
						}
						p = p[n:]
					}
					_ = s.Close()
				}()
				var got bytes.Buffer
				var err error
				if viaWriteTo {
					_, err = s.(io.WriterTo).WriteTo(&got)
				} else {
					_, err = io.Copy(struct{ io.Writer }{&got}, struct{ io.Reader }{s}) // plain Read
				}
				if err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(got.Bytes(), want) {
					errs <- fmt.Errorf("size %d (WriteTo %v): got %d bytes, not what was sent", size, viaWriteTo, got.Len())
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// The server finishing its side ends the client's reads after the data;
// the client's Close ends the server's reads.
func TestHalfClose(t *testing.T) {
	got := make(chan string, 1)
	c, _ := serve(t, func(s httpstream.Stream) {
		_, _ = io.WriteString(s, "from server")
		_ = s.Close()
		b, _ := io.ReadAll(s)
		got <- string(b)
	})
	s := create(t, c)
	b, err := io.ReadAll(s)
	if err != nil || string(b) != "from server" {
		t.Fatalf("client read %q, %v", b, err)
	}
	if _, err := io.WriteString(s, "from client"); err != nil {
		t.Fatalf("writing after the server's FIN: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if g := <-got; g != "from client" {
		t.Fatalf("server read %q", g)
	}
	if _, err := s.Write([]byte("x")); err == nil {
		t.Fatal("write after Close succeeded")
	}
}

// A stream the server refuses fails CreateStream at once; one it resets
// later reads to its end and refuses writes.
func TestRefusedAndReset(t *testing.T) {
	c, _ := serve(t, func(s httpstream.Stream) {
		_, _ = io.WriteString(s, "bye")
		time.Sleep(50 * time.Millisecond) // let "bye" go out first: spdystream writes frames from several goroutines
		_ = s.Reset()
	})
	if err := noHang(t, "CreateStream of a refused stream", func() error {
		_, err := c.CreateStream(http.Header{"Refuse": {"yes"}})
		return err
	}); err == nil {
		t.Fatal("a refused stream was created")
	}
	s := create(t, c)
	b, err := io.ReadAll(s)
	if err != nil || string(b) != "bye" {
		t.Fatalf("read %q, %v before the reset", b, err)
	}
	testkit.Eventually(t, 5*time.Second, func() bool {
		_, err := s.Write([]byte("x"))
		return err != nil
	}, "writes to a reset stream fail")
}

// The connection dropping under a session ends every read, fails writes
// and new streams at once, and closes CloseChan.
func TestConnectionLost(t *testing.T) {
	release := make(chan struct{})
	c, server := serve(t, func(s httpstream.Stream) {
		_, _ = io.WriteString(s, "partial")
		<-release
	})
	defer close(release)
	s := create(t, c)
	buf := make([]byte, 7)
	if _, err := io.ReadFull(s, buf); err != nil {
		t.Fatal(err)
	}
	_ = server.Close()
	if _, err := io.ReadAll(s); err != nil {
		t.Fatalf("a lost connection reads as an error %v, want the end of data", err)
	}
	select {
	case <-c.CloseChan():
	case <-time.After(5 * time.Second):
		t.Fatal("CloseChan still open after the connection was lost")
	}
	if _, err := s.Write([]byte("x")); err == nil {
		t.Fatal("write after the connection was lost succeeded")
	}
	if err := noHang(t, "CreateStream on a lost connection", func() error {
		_, err := c.CreateStream(http.Header{})
		return err
	}); err == nil {
		t.Fatal("CreateStream on a lost connection succeeded")
	}
}

// A stream nobody reads holds its data up to maxBacklog, then the reader
// waits (TCP slows the server) instead of dropping or growing: all of it
// arrives once read.
func TestBacklogBoundedNothingLost(t *testing.T) {
	size := maxBacklog + 3*chunkSize
	payload := randomBytes(t, size)
	wrote := make(chan error, 1)
	c, _ := serve(t, func(s httpstream.Stream) {
		var err error
		for p := payload; len(p) > 0 && err == nil; p = p[min(len(p), 32<<10):] {
			_, err = s.Write(p[:min(len(p), 32<<10)]) // as a runtime writes
		}
		wrote <- err
		_ = s.Close()
	})
	s := create(t, c).(*Stream)
	testkit.Eventually(t, 10*time.Second, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.backlog >= maxBacklog
	}, "the backlog fills")
	s.mu.Lock()
	backlog := s.backlog
	s.mu.Unlock()
	if backlog > maxBacklog+chunkSize {
		t.Fatalf("backlog %d past the bound %d", backlog, maxBacklog)
	}
	var got bytes.Buffer
	if _, err := s.WriteTo(&got); err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), payload) {
		t.Fatalf("got %d bytes, not what was sent (%d)", got.Len(), size)
	}
}

// The server's pings are answered.
func TestAnswersPings(t *testing.T) {
	nc, sc := tcpPair(t)
	c, err := New(nc, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	server, err := newPinger(sc) // a raw spdystream server, for its Ping
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = server.Close() }()
	if _, err := server.Ping(); err != nil {
		t.Fatalf("ping: %v", err)
	}
}

// Close with a writer stuck on a peer that reads nothing returns within
// its bound, and the stuck writer returns too.
func TestCloseUnderStalledWriter(t *testing.T) {
	nc, _ := tcpPair(t) // the server's end never reads
	c, err := New(nc, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	// No server: write DATA on stream 1 without creating it (a peer that
	// never reads fills the socket buffers).
	done := make(chan error, 1)
	go func() {
		big := make([]byte, 1<<20)
		for {
			if err := c.writeData(1, big, false); err != nil {
				done <- err
				return
			}
		}
	}()
	time.Sleep(200 * time.Millisecond) // let the writer block
	_ = noHang(t, "Close under a stalled writer", c.Close)
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the stalled writer returned no error from a closed connection")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stalled writer still blocks after Close")
	}
}

// newPinger is spdystream's server side on nc, for its Ping.
func newPinger(nc net.Conn) (*spdystream.Connection, error) {
	c, err := spdystream.NewConnection(nc, true)
	if err != nil {
		return nil, err
	}
	go c.Serve(spdystream.NoOpStreamHandler)
	return c, nil
}

// Closing with a stream the server has not replied to sends no reset for
// it (spdystream servers, containerd's among them, block a goroutine for
// good on such a reset) and fails the pending CreateStream at once.
func TestNoResetBeforeReply(t *testing.T) {
	nc, sc := tcpPair(t)
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(sc) // a server that reads and never replies
		got <- b
	}()
	c, err := New(nc, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	created := make(chan error, 1)
	go func() {
		_, err := c.CreateStream(http.Header{})
		created <- err
	}()
	testkit.Eventually(t, 5*time.Second, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.streams[1] != nil
	}, "the stream is opened")
	_ = c.Close()
	select {
	case err := <-created:
		if err == nil {
			t.Fatal("CreateStream succeeded on a closed connection")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("CreateStream still waits after Close")
	}
	_ = nc.Close() // Close closed it already: ends the server's read for sure
	b := <-got
	if !bytes.Contains(b, []byte{0x80, 0x03, 0x00, 0x01}) {
		t.Fatalf("no SYN_STREAM sent: % x", b)
	}
	if bytes.Contains(b, []byte{0x80, 0x03, 0x00, 0x03}) {
		t.Fatalf("a RST_STREAM went out for a stream never replied to: % x", b)
	}
}
