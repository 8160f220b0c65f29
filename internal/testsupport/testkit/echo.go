package testkit

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Echo starts a TCP echo server on a free loopback port for the rest of the
// test and returns the port. The mock runtime's pods share the host
// loopback, so it stands for a server in a pod.
func Echo(t testing.TB) int {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ServeEcho(lis))
	return lis.Addr().(*net.TCPAddr).Port
}

// ServeEcho echoes every connection lis accepts until the client
// half-closes (then it half-closes too) or closes. stop closes the listener
// and the connections still open, and waits for every goroutine ServeEcho
// started.
func ServeEcho(lis net.Listener) (stop func()) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := lis.Accept()
			if err != nil {
				return // closed by stop
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = io.Copy(c, c) // ends when either side closes: nothing to report
				if tc, ok := c.(*net.TCPConn); ok {
					_ = tc.CloseWrite() // the peer may be gone already
				}
				mu.Lock()
				delete(conns, c)
				mu.Unlock()
				_ = c.Close()
			}()
		}
	}()
	return func() {
		_ = lis.Close() // a second close's error means nothing here
		mu.Lock()
		for c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}
}
