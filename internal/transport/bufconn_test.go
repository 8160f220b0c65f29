package transport

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/moby/spdystream/spdy"
)

// readCounter is a net.Conn over a reader that counts Read calls (each one
// a read syscall on a real socket) and, like a socket, hands out at most
// segment bytes per call.
type readCounter struct {
	net.Conn
	r       io.Reader
	segment int
	reads   int
}

func (c *readCounter) Read(p []byte) (int, error) {
	c.reads++
	if len(p) > c.segment {
		p = p[:c.segment]
	}
	return c.r.Read(p)
}

func TestBufferedConnReadsUpgradeLeftoversFirst(t *testing.T) {
	src := &readCounter{r: strings.NewReader("HTTP/1.1 101 OK\r\n\r\nframes"), segment: 1 << 20}
	br := bufio.NewReader(src)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	c := NewBufferedConn(src, br)
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "frames" {
		t.Fatalf("read %q, %v; want the bytes past the answer, %q", got, err, "frames")
	}
}

func TestBufferedConnLargeReadsBypassTheBuffer(t *testing.T) {
	payload := bytes.Repeat([]byte{7}, 4*ReadBufferSize)
	src := &readCounter{r: bytes.NewReader(payload), segment: 1 << 20}
	c := NewBufferedConn(src, nil)
	p := make([]byte, len(payload))
	if _, err := io.ReadFull(c, p); err != nil {
		t.Fatal(err)
	}
	if src.reads != 1 || !bytes.Equal(p, payload) {
		t.Fatalf("%d reads of the connection for one large read, want 1 (and the same bytes)", src.reads)
	}
}

// frameStream is n SPDY data frames of size bytes each, as a runtime's
// streaming server sends exec stdout (cri-streaming: 32 KiB writes).
func frameStream(tb testing.TB, n, size int) []byte {
	var buf bytes.Buffer
	f, err := spdy.NewFramer(&buf, nil)
	if err != nil {
		tb.Fatal(err)
	}
	data := make([]byte, size)
	for range n {
		if err := f.WriteFrame(&spdy.DataFrame{StreamId: 3, Data: data}); err != nil {
			tb.Fatal(err)
		}
	}
	return buf.Bytes()
}

// BenchmarkSPDYFrameRead is spdystream's framer reading 32 KiB data frames
// from a socket that hands out up to 64 KiB per read, straight (as
// k8s.io/streaming does) and through BufferedConn; reads/frame is the read
// syscalls a frame costs.
func BenchmarkSPDYFrameRead(b *testing.B) {
	const frames, size = 256, 32 << 10
	stream := frameStream(b, frames, size)
	for _, tc := range []struct {
		name string
		wrap func(net.Conn) net.Conn
	}{
		{"direct", func(c net.Conn) net.Conn { return c }},
		{"buffered", func(c net.Conn) net.Conn { return NewBufferedConn(c, nil) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			var reads int
			for b.Loop() {
				src := &readCounter{r: bytes.NewReader(stream), segment: 64 << 10}
				f, err := spdy.NewFramer(io.Discard, tc.wrap(src))
				if err != nil {
					b.Fatal(err)
				}
				for range frames {
					if _, err := f.ReadFrame(); err != nil {
						b.Fatal(err)
					}
				}
				reads += src.reads
			}
			b.ReportMetric(float64(reads)/float64(b.N*frames), "reads/frame")
		})
	}
}
