package remotecommand

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/transport"
)

// wsClientFrame is a masked frame as a client writes it.
func wsClientFrame(op byte, payload []byte) []byte {
	b := []byte{0x80 | op}
	switch n := len(payload); {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n < 1<<16:
		b = append(b, 0x80|126)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, 0x80|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	b = append(b, 1, 2, 3, 4) // the mask key; the payload is passed as is
	return append(b, payload...)
}

// wsWithoutPings is what reaches the server of a client stream: the frames
// in order, pings left out, a header whose end has not come held back.
func wsWithoutPings(stream []byte) []byte {
	var out []byte
	for len(stream) > 0 {
		n := wsHeaderLen(stream[:min(2, len(stream))])
		if len(stream) < n {
			return out
		}
		end := n + int(min(wsPayloadLen(stream[:n]), uint64(len(stream)-n)))
		if stream[0]&0x0f != wsOpPing {
			out = append(out, stream[:end]...)
		}
		stream = stream[end:]
	}
	return out
}

// filterInChunks writes stream through a fresh wsOutFrames in writes of the
// given sizes (the rest in one write) and returns what went out.
func filterInChunks(t *testing.T, stream []byte, sizes []int) ([]byte, int) {
	var o wsOutFrames
	var out []byte
	calls := 0
	pass := func(b []byte) error {
		calls++
		out = append(out, b...)
		return nil
	}
	for _, n := range sizes {
		n = min(n, len(stream))
		if err := o.filter(stream[:n], pass); err != nil {
			t.Fatal(err)
		}
		stream = stream[n:]
	}
	if err := o.filter(stream, pass); err != nil {
		t.Fatal(err)
	}
	return out, calls
}

func TestWSOutFramesDropsPingsAcrossWrites(t *testing.T) {
	var stream []byte
	stream = append(stream, wsClientFrame(wsOpBinary, []byte("\x00stdin"))...)
	stream = append(stream, wsClientFrame(wsOpPing, nil)...)
	stream = append(stream, wsClientFrame(wsOpBinary, bytes.Repeat([]byte{'m'}, 300))...)    // 16-bit length
	stream = append(stream, wsClientFrame(wsOpPing, []byte("payload"))...)                   // a ping with data
	stream = append(stream, wsClientFrame(wsOpBinary, bytes.Repeat([]byte{0x89}, 70000))...) // 64-bit length, ping-like bytes
	stream = append(stream, wsClientFrame(wsOpClose, []byte{3, 232})...)
	want := wsWithoutPings(stream)
	if bytes.Contains(want, wsClientFrame(wsOpPing, nil)) || len(want) != len(stream)-6-13 {
		t.Fatalf("the reference filter is wrong: %d of %d bytes", len(want), len(stream))
	}
	// Every split point in two writes, header splits included.
	for cut := 0; cut <= len(stream); cut += 1 + cut/64 {
		got, _ := filterInChunks(t, stream, []int{cut})
		if !bytes.Equal(got, want) {
			t.Fatalf("written in two at %d: %d bytes out, want %d", cut, len(got), len(want))
		}
	}
	// A byte at a time.
	ones := make([]int, len(stream))
	for i := range ones {
		ones[i] = 1
	}
	if got, _ := filterInChunks(t, stream, ones); !bytes.Equal(got, want) {
		t.Fatalf("written a byte at a time: %d bytes out, want %d", len(got), len(want))
	}
	// One write: one pass per run between pings.
	if got, calls := filterInChunks(t, stream, nil); !bytes.Equal(got, want) || calls != 3 {
		t.Fatalf("written at once: %d bytes out in %d writes, want %d in 3", len(got), calls, len(want))
	}
}

func FuzzWSOutFrames(f *testing.F) {
	f.Add(append(wsClientFrame(wsOpPing, nil), wsClientFrame(wsOpBinary, []byte("\x01x"))...), []byte{1, 3})
	f.Add(wsClientFrame(wsOpBinary, bytes.Repeat([]byte{9}, 200)), []byte{2, 2, 2})
	f.Fuzz(func(t *testing.T, stream, cuts []byte) {
		sizes := make([]int, len(cuts))
		for i, c := range cuts {
			sizes[i] = int(c)
		}
		if got, _ := filterInChunks(t, stream, sizes); !bytes.Equal(got, wsWithoutPings(stream)) {
			t.Fatalf("in writes of %v: %x, want %x", sizes, got, wsWithoutPings(stream))
		}
	})
}

// Once upgraded, the filter keeps client-go's pings and read deadlines off
// the connection; before, the handshake's deadline applies.
func TestWSStatusFilterQuietAfterUpgrade(t *testing.T) {
	client, server := net.Pipe()
	defer func() { _ = client.Close() }()
	defer func() { _ = server.Close() }()
	f := newWSStatusFilter(client, &statusWatch{})
	if err := f.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("before the upgrade a past read deadline gives %v, want a timeout", err)
	}
	_ = client.SetReadDeadline(time.Time{})
	go func() {
		_, _ = io.WriteString(server, "HTTP/1.1 101 Switching Protocols\r\nSec-WebSocket-Protocol: "+transport.ExecProtocolV4+"\r\n\r\n")
	}()
	if _, err := io.ReadAll(io.LimitReader(f, int64(len("HTTP/1.1 101 Switching Protocols\r\nSec-WebSocket-Protocol: "+transport.ExecProtocolV4+"\r\n\r\n")))); err != nil {
		t.Fatal(err)
	}
	if err := f.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	data := wsClientFrame(wsOpBinary, []byte("\x00in"))
	got := make(chan []byte)
	go func() {
		b := make([]byte, 64)
		n, _ := io.ReadAtLeast(server, b, len(data))
		got <- b[:n]
	}()
	if _, err := f.Write(wsClientFrame(wsOpPing, nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, data) {
		t.Fatalf("the server got %x, want the data frame alone %x", b, data)
	}
	go func() { _, _ = server.Write([]byte{0x82, 2, 1, 'x'}) }()
	if n, err := f.Read(make([]byte, 8)); err != nil || n == 0 {
		t.Fatalf("after the upgrade a read past the heartbeat's deadline: %d, %v", n, err)
	}
}

// slowOut takes what it is given at about rate bytes a second.
type slowOut struct {
	buf  bytes.Buffer
	rate int
}

func (w *slowOut) Write(p []byte) (int, error) {
	time.Sleep(time.Duration(len(p)) * time.Second / time.Duration(w.rate))
	return w.buf.Write(p)
}

// A local reader slower than the server: the server has closed long before
// crisp has read its output, and nothing crisp sends after that may make it
// reset the connection (client-go's ping at 5 s did, losing the tail).
func TestWebSocketSlowReaderGetsEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 7 s: a reader slower than the 5 s ping period")
	}
	f := newFakeServer(t, nil, criWS)
	offers, _ := transport.ExecOffers(transport.WebSocket, "")
	const size = 2 << 20
	out := &slowOut{rate: size / 7}
	if _, err := f.stream(offers, transport.Config{}, Streams{Stdout: out}, "zeros", "2097152"); err != nil {
		t.Fatalf("%v (after %d of %d bytes)", err, out.buf.Len(), size)
	}
	if out.buf.Len() != size {
		t.Fatalf("got %d bytes, want %d", out.buf.Len(), size)
	}
}
