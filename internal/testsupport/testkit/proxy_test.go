package testkit

import (
	"errors"
	"io"
	"net"
	"strconv"
	"syscall"
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

// TestProxyResetsOneIn: with ResetOneIn(1) every connection meets a reset
// (not an orderly EOF), and a target named later with SetTarget is reached
// once the resets stop.
func TestProxyResetsOneIn(t *testing.T) {
	p := NewProxy(t, "")
	p.ResetOneIn(1)
	exchange := func() error {
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			return err
		}
		defer func() { _ = c.Close() }()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte("hello")); err != nil {
			return err
		}
		buf := make([]byte, 5)
		if _, err := io.ReadFull(c, buf); err != nil {
			return err
		}
		if string(buf) != "hello" {
			return errors.New("echo " + string(buf))
		}
		return nil
	}
	for range 3 {
		if err := exchange(); !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("exchange through a resetting proxy: %v, want a connection reset", err)
		}
	}
	if p.Resets() != 3 {
		t.Errorf("Resets() = %d, want 3", p.Resets())
	}
	p.ResetOneIn(0)
	p.SetTarget(net.JoinHostPort("127.0.0.1", strconv.Itoa(Echo(t))))
	if err := exchange(); err != nil {
		t.Fatalf("exchange once the resets stop: %v", err)
	}
}
