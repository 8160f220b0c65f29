package demo

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
)

// echoServer is a TCP echo server on a free loopback port; close stops it
// and waits for every connection's goroutine.
type echoServer struct {
	lis   net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func startEchoServer() (*echoServer, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start the echo server on 127.0.0.1: %w", err)
	}
	s := &echoServer{lis: lis, conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			conn, err := lis.Accept()
			if err != nil {
				return // closed
			}
			s.mu.Lock()
			s.conns[conn] = struct{}{}
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				_, _ = io.Copy(conn, conn) // closing on the way out: nothing to report
				_ = conn.Close()           // closing on the way out: nothing to report
				s.mu.Lock()
				delete(s.conns, conn)
				s.mu.Unlock()
			}()
		}
	}()
	return s, nil
}

func (s *echoServer) port() int { return s.lis.Addr().(*net.TCPAddr).Port }

func (s *echoServer) close() {
	_ = s.lis.Close() // closing on the way out: nothing to report
	s.mu.Lock()
	for c := range s.conns {
		_ = c.Close() // closing on the way out: nothing to report
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// roundTrip sends payload to addr and reads as many bytes back, within
// ctx's deadline.
func roundTrip(ctx context.Context, addr string, payload []byte) ([]byte, error) {
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }() // closing on the way out: nothing to report
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline) // closing on the way out: nothing to report
	}
	// Closing the connection unblocks a read when ctx ends early (Ctrl-C).
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() }) // closing on the way out: nothing to report
	defer stop()
	if _, err := conn.Write(payload); err != nil {
		return nil, err
	}
	got := make([]byte, len(payload))
	n, err := io.ReadFull(conn, got)
	return got[:n], err
}
