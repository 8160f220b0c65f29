package testkit

import (
	"errors"
	"io"
	"net"
	"strconv"
	"testing"
	"time"
)

// TestProxy: bytes go through until the proxy swallows them, and nothing
// is closed either way: the client's read times out rather than ending.
func TestProxy(t *testing.T) {
	for _, m := range []ProxyMode{ProxySwallow, ProxyFreeze} {
		t.Run(strconv.Itoa(int(m)), func(t *testing.T) {
			p := NewProxy(t, net.JoinHostPort("127.0.0.1", strconv.Itoa(Echo(t))))
			c, err := net.Dial("tcp", p.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.Close() }()
			buf := make([]byte, 5)
			if _, err := c.Write([]byte("hello")); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "hello" {
				t.Fatalf("forwarded echo = %q, %v", buf, err)
			}
			p.Set(m)
			if _, err := c.Write([]byte("again")); err != nil {
				t.Fatal(err)
			}
			_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			n, err := c.Read(buf)
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Errorf("read after the cut = %d bytes, %v; want a timeout (nothing through, nothing closed)", n, err)
			}
		})
	}
}
