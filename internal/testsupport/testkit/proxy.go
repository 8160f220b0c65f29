package testkit

import (
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// ProxyMode is what a Proxy does with the bytes it reads.
type ProxyMode int32

// The modes, as a network or a peer can fail without closing anything.
const (
	// ProxyForward carries bytes both ways (the start).
	ProxyForward ProxyMode = iota
	// ProxySwallow reads both ways and drops it all, never closing:
	// packets dropped both ways.
	ProxySwallow
	// ProxyFreeze reads nothing more and sends nothing: a peer stopped
	// with SIGSTOP, whose kernel still holds the connection.
	ProxyFreeze
)

// Proxy stands between a client and a server on loopback and can stop
// carrying bytes mid-connection without closing anything, as a cut network
// or a frozen runtime would, or reset some of the connections it accepts.
type Proxy struct {
	ln         net.Listener
	mode       atomic.Int32
	resetOneIn atomic.Int32
	resets     atomic.Int32
	thaw       chan struct{} // closed at the end: frozen copies return

	mu     sync.Mutex
	target string
	conns  []net.Conn
	wg     sync.WaitGroup
}

// NewProxy starts a Proxy to target (host:port; "" to name it later with
// SetTarget) for the rest of the test, in ProxyForward mode.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target, thaw: make(chan struct{})}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// Addr is the proxy's host:port, to dial instead of the target's.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Set switches every connection, open or to come, to m.
func (p *Proxy) Set(m ProxyMode) { p.mode.Store(int32(m)) }

// SetTarget names the server connections to come are carried to: a server
// that must know the proxy's address before it starts.
func (p *Proxy) SetTarget(addr string) {
	p.mu.Lock()
	p.target = addr
	p.mu.Unlock()
}

// ResetOneIn makes the proxy reset about one accepted connection in n,
// chosen at random, before it dials the target: the client's connect
// succeeds and its first read or write meets a reset. 0 resets none.
func (p *Proxy) ResetOneIn(n int) { p.resetOneIn.Store(int32(n)) }

// Resets is how many connections ResetOneIn has reset so far.
func (p *Proxy) Resets() int { return int(p.resets.Load()) }

func (p *Proxy) close() {
	_ = p.ln.Close()
	close(p.thaw)
	p.mu.Lock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		if n := p.resetOneIn.Load(); n > 0 && rand.IntN(int(n)) == 0 {
			if tc, ok := in.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // close with RST, not FIN
			}
			_ = in.Close()
			p.resets.Add(1)
			continue
		}
		p.mu.Lock()
		target := p.target
		p.mu.Unlock()
		out, err := net.Dial("tcp", target)
		if err != nil {
			_ = in.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.copy(out, in)
		go p.copy(in, out)
	}
}

func (p *Proxy) copy(dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		if ProxyMode(p.mode.Load()) == ProxyFreeze {
			<-p.thaw
			return
		}
		n, err := src.Read(buf)
		if err != nil {
			_ = dst.Close()
			return
		}
		switch ProxyMode(p.mode.Load()) {
		case ProxySwallow:
			continue
		case ProxyFreeze:
			<-p.thaw
			return
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			_ = src.Close()
			return
		}
	}
}
