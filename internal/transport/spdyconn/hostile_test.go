package spdyconn

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/moby/spdystream/spdy"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// hostileServer reads what the client sends on sc and, once the client's
// first SYN_STREAM arrived, writes answer; then it reads on until the end.
func hostileServer(t *testing.T, sc net.Conn, answer []byte) {
	t.Helper()
	go func() {
		buf := make([]byte, 64<<10)
		sent := false
		for {
			n, err := sc.Read(buf)
			if !sent && n > 0 && bytes.Contains(buf[:n], []byte{0x80, spdy.Version, 0, byte(spdy.TypeSynStream)}) {
				sent = true
				_, _ = sc.Write(answer)
			}
			if err != nil {
				return
			}
		}
	}()
}

// frames encodes frames as a server would (its own header compressor).
func frames(tb testing.TB, fs ...spdy.Frame) []byte {
	tb.Helper()
	var b bytes.Buffer
	fr, err := spdy.NewFramer(&b, nil)
	if err != nil {
		tb.Fatal(err)
	}
	for _, f := range fs {
		if err := fr.WriteFrame(f); err != nil {
			tb.Fatal(err)
		}
	}
	return b.Bytes()
}

// headerBomb is a SYN_REPLY for stream 1 whose small compressed header
// block inflates to n headers of size bytes each.
func headerBomb(tb testing.TB, n, size int) []byte {
	tb.Helper()
	h := http.Header{}
	value := strings.Repeat("a", size)
	for i := range n {
		h.Set("x-bomb-"+strings.Repeat("b", i%8)+string(rune('a'+i%26))+string(rune('a'+i/26%26)), value)
	}
	return frames(tb, &spdy.SynReplyFrame{StreamId: 1, Headers: h})
}

// A header block past crisp's bounds is refused with a clear error, and
// the client holds nothing like what it inflates to: on crisp's connection
// and on the way back (spdystream's, given the same framer limits, whose
// error says only that the connection ended).
func TestHeaderBombRefused(t *testing.T) {
	for _, kind := range []string{KindCrisp, KindSpdystream} {
		t.Run(kind, func(t *testing.T) { testHeaderBombRefused(t, kind) })
	}
}

func testHeaderBombRefused(t *testing.T, kind string) {
	for _, tc := range []struct {
		name       string
		n, size    int
		compressed int // the most the answer may take on the wire
	}{
		{"one-header-of-1MiB", 1, 1 << 20, 64 << 10},
		{"many-headers", 200, 1 << 10, 64 << 10},
		{"3-headers-of-1MiB", 3, 1 << 20, 64 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bomb := headerBomb(t, tc.n, tc.size)
			if len(bomb) > tc.compressed {
				t.Fatalf("the bomb is %d bytes on the wire: not the hostile shape", len(bomb))
			}
			nc, sc := tcpPair(t)
			hostileServer(t, sc, bomb)
			c, err := Open(nc, nil, Options{Kind: kind, CreateTimeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.Close() }()
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			err = noHang(t, "CreateStream against a header bomb", func() error {
				_, err := c.CreateStream(http.Header{})
				return err
			})
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if kind == KindCrisp && !errors.Is(err, ErrFrameRefused) || err == nil {
				t.Fatalf("CreateStream: %v, want the frame refused", err)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
				t.Errorf("reading the refused frame allocated %d MiB", grew>>20)
			}
			t.Logf("refused: %v", err)
		})
	}
}

// A server that upgrades but never answers a stream: CreateStream fails
// once the create timeout passes, saying so.
func TestCreateTimeout(t *testing.T) {
	nc, sc := tcpPair(t)
	go func() { _, _ = io.Copy(io.Discard, sc) }() // reads, never replies
	c, err := New(nc, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	c.SetCreateTimeout(200 * time.Millisecond)
	err = noHang(t, "CreateStream on a server that never replies", func() error {
		_, err := c.CreateStream(http.Header{})
		return err
	})
	if !errors.Is(err, ErrCreateTimeout) || !strings.Contains(err.Error(), "200ms") {
		t.Fatalf("CreateStream: %v, want the create timeout naming 200ms", err)
	}
}

// One stream nobody reads does not stop the others: with an overrun wait
// it is dropped (its reader and writer see ErrOverrun, the server a
// reset) and its siblings' data arrives whole.
func TestOverrunDropsOnlyTheStalledStream(t *testing.T) {
	size := maxBacklog + 4*chunkSize
	payload := randomBytes(t, size)
	c, _ := serve(t, func(s httpstream.Stream) {
		for p := payload; len(p) > 0; p = p[min(len(p), 32<<10):] {
			if _, err := s.Write(p[:min(len(p), 32<<10)]); err != nil {
				break
			}
		}
		_ = s.Close()
	})
	c.SetOverrunWait(300 * time.Millisecond)
	stalled := create(t, c, "name", "stalled")
	// The stalled stream fills its backlog first: the read loop is
	// waiting on it when the healthy ones start.
	testkit.Eventually(t, 10*time.Second, func() bool {
		st := stalled.(*Stream)
		st.mu.Lock()
		defer st.mu.Unlock()
		return st.backlog >= maxBacklog || st.resetErr != nil
	}, "the stalled stream's backlog fills")
	healthy := make(chan error, 3)
	for range 3 {
		go func() {
			s, err := c.CreateStream(http.Header{})
			if err != nil {
				healthy <- err
				return
			}
			var got bytes.Buffer
			if _, err := io.Copy(&got, s); err != nil {
				healthy <- err
				return
			}
			if !bytes.Equal(got.Bytes(), payload) {
				healthy <- errors.New("a healthy stream's data differs from what was sent")
				return
			}
			healthy <- nil
		}()
	}
	for range 3 {
		if err := noHang(t, "a healthy stream beside a stalled one", func() error { return <-healthy }); err != nil {
			t.Error(err)
		}
	}
	_, err := io.Copy(io.Discard, stalled)
	if !errors.Is(err, ErrOverrun) {
		t.Errorf("reading the stalled stream: %v, want ErrOverrun", err)
	}
	if _, err := stalled.Write([]byte("x")); !errors.Is(err, ErrOverrun) {
		t.Errorf("writing the stalled stream: %v, want ErrOverrun", err)
	}
}

// Without an overrun wait a stream whose reader stopped is waited for (its
// data kept); turning the wait on later drops the stream already waiting,
// its reader idle longer than the new wait, without another frame arriving.
func TestOverrunWaitTurnedOnWhileAStreamWaits(t *testing.T) {
	payload := randomBytes(t, maxBacklog+4*chunkSize)
	c, _ := serve(t, func(s httpstream.Stream) {
		_, _ = s.Write(payload) // fails once the stream is dropped
		_ = s.Close()
	})
	stalled := create(t, c, "name", "stalled").(*Stream)
	full := func() bool {
		stalled.mu.Lock()
		defer stalled.mu.Unlock()
		return stalled.backlog >= maxBacklog
	}
	testkit.Eventually(t, 10*time.Second, full, "the stalled stream's backlog fills")
	time.Sleep(500 * time.Millisecond)
	if err := stalled.Err(); err != nil || !full() {
		t.Fatalf("without an overrun wait the stream was dropped (%v) or emptied", err)
	}
	c.SetOverrunWait(300 * time.Millisecond)
	select {
	case <-stalled.Dropped():
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting stream was not dropped once the overrun wait was turned on")
	}
	if err := stalled.Err(); !errors.Is(err, ErrOverrun) {
		t.Errorf("Err: %v, want ErrOverrun", err)
	}
}
