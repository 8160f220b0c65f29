package portforward

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
)

// benchApp serves the benchmark's exchanges: 'd' + length: it sends length
// bytes; 'u' + length: it reads length bytes and answers one byte.
func benchApp(c net.Conn) {
	var hdr [9]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return
	}
	n := int64(binary.LittleEndian.Uint64(hdr[1:]))
	buf := make([]byte, 64<<10)
	switch hdr[0] {
	case 'd':
		for n > 0 {
			k := min(n, int64(len(buf)))
			if _, err := c.Write(buf[:k]); err != nil {
				return
			}
			n -= k
		}
	case 'u':
		if _, err := io.CopyBuffer(io.Discard, io.LimitReader(c, n), buf); err != nil {
			return
		}
		_, _ = c.Write([]byte{1})
	}
}

// BenchmarkPortForward measures forwarded throughput per protocol against
// the mock runtime's streaming server, through a local listener as the
// command runs it: download (pod to client) and upload (client to pod).
func BenchmarkPortForward(b *testing.B) {
	const size = 64 << 20
	app := startPFApp(b, benchApp)
	_, src := startStreamServer(b, streamserver.ProfileFull)
	for _, tc := range pfCases {
		for _, dir := range []byte{'d', 'u'} {
			name := map[byte]string{'d': "download", 'u': "upload"}[dir]
			b.Run(tc.name+"/"+name, func(b *testing.B) {
				f := newTestForwarder(b, src, tc.offer, nil)
				srv := serveLocal(b, f, app.port)
				defer func() {
					if err := srv.stop(); err != nil {
						b.Error(err)
					}
				}()
				buf := make([]byte, 64<<10)
				b.SetBytes(size)
				b.ResetTimer()
				for range b.N {
					if err := benchExchange(srv.addr, dir, size, buf); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func benchExchange(addr string, dir byte, n int64, buf []byte) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	var hdr [9]byte
	hdr[0] = dir
	binary.LittleEndian.PutUint64(hdr[1:], uint64(n))
	if _, err := c.Write(hdr[:]); err != nil {
		return err
	}
	if dir == 'd' {
		got, err := io.CopyBuffer(io.Discard, io.LimitReader(c, n), buf)
		if err == nil && got != n {
			err = fmt.Errorf("received %d of %d bytes", got, n)
		}
		return err
	}
	for left := n; left > 0; {
		k := min(left, int64(len(buf)))
		if _, err := c.Write(buf[:k]); err != nil {
			return err
		}
		left -= k
	}
	var ack [1]byte
	_, err = io.ReadFull(c, ack[:])
	return err
}
