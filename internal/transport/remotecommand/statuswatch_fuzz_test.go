package remotecommand

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
)

// byteConn is a net.Conn that reads from a buffer (what a runtime sent).
type byteConn struct {
	net.Conn
	r io.Reader
}

func (c byteConn) Read(p []byte) (int, error) { return c.r.Read(p) }
func (c byteConn) Close() error               { return nil }

// FuzzWSV1Filter feeds arbitrary server bytes (upgrade answer and frames)
// through the channel.k8s.io error-channel filter: it must never panic,
// always make progress to the end of the input, and keep at most
// maxErrorText of error text.
func FuzzWSV1Filter(f *testing.F) {
	answer := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nSec-WebSocket-Protocol: channel.k8s.io\r\n\r\n"
	frame := func(b0 byte, payload string) string {
		return string([]byte{b0, byte(len(payload))}) + payload
	}
	for _, s := range []string{
		answer + frame(0x82, "\x01out") + frame(0x82, "\x03exit code 7") + frame(0x88, ""),
		answer + frame(0x02, "\x03part one, ") + frame(0x80, "part two") + frame(0x88, ""),
		answer + "\x82\x7e\x00\x05\x01hello" + "\x82\x7f\x00\x00\x00\x00\x00\x00\x00\x03\x02ab",
		answer + "\x82\x85abcd\x01\x02\x03\x04\x05",
		"HTTP/1.1 403 Forbidden\r\nSec-WebSocket-Protocol: channel.k8s.io\r\n\r\n\x82\x01\x03",
		"HTTP/1.1 101 Switching Protocols\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n" + frame(0x82, "\x03{}"),
		answer + "\x82\x7f\xff\xff\xff\xff\xff\xff\xff\xff\x03",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		w := &statusWatch{}
		filter := newWSStatusFilter(byteConn{r: bytes.NewReader(data)}, w)
		buf := make([]byte, 7) // small reads: every partial path
		var out int
		// Each Read hands out at least one byte or consumes input; a
		// filter stuck handing out nothing would spin here forever.
		for reads := 0; ; reads++ {
			if reads > 4*len(data)+16 {
				t.Fatalf("no end after %d reads of %d input bytes (%d out)", reads, len(data), out)
			}
			n, err := filter.Read(buf)
			out += n
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("Read error %v on in-memory input", err)
				}
				break
			}
		}
		if len(w.text) > maxErrorText {
			t.Fatalf("kept %d bytes of error text, more than %d", len(w.text), maxErrorText)
		}
		if w.hold {
			select {
			case <-w.ended:
			default:
				t.Fatal("the held error stream did not end with the input")
			}
		}
	})
}
