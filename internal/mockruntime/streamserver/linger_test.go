package streamserver

import (
	"bytes"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A session's connection closed while a byte of its client lies unread (the
// end of stdin of a command that exited without reading it) must still
// deliver the output queued before the close; an aborted one must not (the
// kernel answers the unread byte with a reset and drops what it has not
// sent), which shows the test sees the difference.
func TestSessionCloseDeliversQueuedOutput(t *testing.T) {
	const outputSize = 256 << 10
	for _, tc := range []struct {
		name    string
		linger  bool
		wantAll bool
	}{
		{"session lingers", true, true},
		{"abort resets", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = ln.Close() }()
			// A small client window keeps most of the output in the
			// server's send queue when it closes.
			dialer := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
				var serr error
				if err := rc.Control(func(fd uintptr) {
					serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
				}); err != nil {
					return err
				}
				return serr
			}}
			client, err := dialer.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = client.Close() }()
			raw, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			if err := raw.(*net.TCPConn).SetWriteBuffer(4 << 20); err != nil {
				t.Fatal(err)
			}
			g := &generation{conns: map[*trackedConn]struct{}{}}
			conn := &trackedConn{Conn: raw, gen: g}
			g.conns[conn] = struct{}{}
			conn.linger.Store(tc.linger)

			if _, err := client.Write([]byte("ping")); err != nil {
				t.Fatal(err)
			}
			waitUnread(t, raw.(*net.TCPConn), 4)

			output := bytes.Repeat([]byte("0123456789abcdef"), outputSize/16)
			wrote, closed := make(chan error, 1), make(chan error, 1)
			go func() {
				_, err := conn.Write(output)
				wrote <- err
				closed <- conn.Close()
			}()
			select {
			case err := <-wrote:
				if err != nil {
					t.Fatalf("server write: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the server's write did not fit its send buffer")
			}
			// An abort returns at once; a lingering close waits for the
			// client, which reads after this.
			closedEarly := false
			select {
			case err := <-closed:
				closedEarly = true
				if err != nil {
					t.Errorf("closing: %v", err)
				}
			case <-time.After(200 * time.Millisecond):
			}
			_ = client.SetReadDeadline(time.Now().Add(10 * time.Second))
			got, readErr := io.ReadAll(client)
			if tc.wantAll {
				if readErr != nil || !bytes.Equal(got, output) {
					t.Fatalf("client read %d of %d bytes, error %v", len(got), len(output), readErr)
				}
				_ = client.Close()
				if closedEarly {
					t.Fatal("the lingering close returned before the client read its output")
				}
				select {
				case err := <-closed:
					if err != nil {
						t.Errorf("lingering close: %v", err)
					}
				case <-time.After(lingerTimeout + 5*time.Second):
					t.Fatal("the lingering close did not end when the client hung up")
				}
			} else if readErr == nil || len(got) == len(output) {
				t.Fatalf("aborted connection delivered %d of %d bytes, error %v: expected a reset that loses output", len(got), len(output), readErr)
			} else if !errors.Is(readErr, syscall.ECONNRESET) {
				t.Fatalf("aborted connection: %v, want a reset", readErr)
			}
			if len(g.conns) != 0 {
				t.Errorf("closed connection still tracked")
			}
		})
	}
}

// waitUnread waits until at least n bytes sit unread in c's receive queue.
func waitUnread(t *testing.T, c *net.TCPConn, n int) {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var queued int
		var ioErr error
		if err := rc.Control(func(fd uintptr) {
			queued, ioErr = unix.IoctlGetInt(int(fd), unix.SIOCINQ)
		}); err != nil {
			t.Fatal(err)
		}
		if ioErr != nil {
			t.Fatal(ioErr)
		}
		if queued >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes unread after 5 s, want %d", queued, n)
		}
		time.Sleep(time.Millisecond)
	}
}
