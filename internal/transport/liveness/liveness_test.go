package liveness

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// peer is the far end of a loopback TCP connection: it answers every byte
// it reads with one byte ("pong") while answering is on, and reads and
// drops them otherwise.
func pair(t *testing.T) (client net.Conn, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { _ = client.Close(); _ = server.Close() })
	return client, server
}

// answer echoes what server reads until it fails; with answer false it
// reads and drops.
func serve(server net.Conn, answer bool) chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64)
		for {
			n, err := server.Read(buf)
			if err != nil {
				return
			}
			if answer {
				if _, err := server.Write(buf[:n]); err != nil {
					return
				}
			}
		}
	}()
	return done
}

// A quiet peer that answers pings is not ended, however long the silence
// lasts: the answers prove liveness, not data.
func TestQuietLivePeerStays(t *testing.T) {
	client, server := pair(t)
	done := serve(server, true)
	c := Wrap(client, 200*time.Millisecond)
	c.Start(func() error { _, err := c.Write([]byte{'p'}); return err })
	if err := readQuiet(c, 2*time.Second); err != nil {
		t.Fatalf("a peer answering every ping was ended: %v", err)
	}
	_ = c.Close()
	<-done
}

// A peer that swallows everything and never closes is ended, and the error
// says what was seen last.
func TestSwallowingPeerIsEnded(t *testing.T) {
	client, server := pair(t)
	done := serve(server, false)
	if _, err := server.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	c := Wrap(client, 200*time.Millisecond)
	c.Start(func() error { _, err := c.Write([]byte{'p'}); return err })
	_, err := io.ReadAll(c)
	var dead *DeadPeerError
	if !errors.As(err, &dead) || dead.Kernel || dead.Pings == 0 || dead.LastByte < 0 {
		t.Fatalf("read ended with %v (%+v), want the watch's DeadPeerError with pings and the last byte", err, dead)
	}
	for _, want := range []string{"no sign of life", "last byte received", "unanswered", "--peer-timeout"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if !errors.Is(c.Err(), err) {
		t.Errorf("Err() = %v, want the read's error", c.Err())
	}
	_ = c.Close()
	_ = server.Close()
	<-done
}

// While crisp does not read (a slow local reader), the silence does not
// count: the peer's data waits unread and is all there afterwards.
func TestNotReadingIsNotSilence(t *testing.T) {
	client, server := pair(t)
	done := serve(server, false) // swallows pings: only not reading saves it
	c := Wrap(client, 100*time.Millisecond)
	c.Start(func() error { _, err := c.Write([]byte{'p'}); return err })
	if _, err := server.Write([]byte("kept")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(800 * time.Millisecond) // 8 bounds of not reading
	buf := make([]byte, 4)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "kept" {
		t.Fatalf("read %q, %v after a pause; want \"kept\"", buf, err)
	}
	_ = c.Close()
	_ = server.Close()
	<-done
}

// A zero bound watches nothing and starts no goroutine.
func TestZeroBoundWatchesNothing(t *testing.T) {
	client, server := pair(t)
	done := serve(server, false)
	c := Wrap(client, 0)
	c.Start(func() error { t.Error("pinged with no bound"); return nil })
	if err := readQuiet(c, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	<-done
}

// readQuiet reads c for d, which must end only by the deadline.
func readQuiet(c *Conn, d time.Duration) error {
	_ = c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 64)
	for {
		_, err := c.Read(buf)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && !errors.As(err, new(*DeadPeerError)) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// A peer that sends all along but takes none of crisp's data (its window
// closed for many bounds) is alive: the kernel's timeout is off while it
// sends. With TCP_USER_TIMEOUT left on, the kernel ended it after the bound.
func TestSendingPeerThatTakesNothingStays(t *testing.T) {
	client, server := pair(t)
	stopSending := make(chan struct{})
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopSending:
				return
			case <-tick.C:
			}
			if _, err := server.Write([]byte{'d'}); err != nil {
				return
			}
		}
	}()
	c := Wrap(client, 300*time.Millisecond)
	c.Start(func() error { return nil }) // the pings would go nowhere anyway
	written := make(chan error, 1)
	go func() {
		blob := make([]byte, 1<<20)
		for {
			if _, err := c.Write(blob); err != nil {
				written <- err
				return
			}
		}
	}()
	err := readQuiet(c, 2*time.Second)
	close(stopSending)
	<-sent
	if err != nil {
		t.Fatalf("a peer sending all along was ended: %v", err)
	}
	_ = c.Close()
	if werr := <-written; errors.As(werr, new(*DeadPeerError)) {
		t.Errorf("the blocked write ended with %v, want the close's error", werr)
	}
}
