package testkit

import (
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
// or a frozen runtime would.
type Proxy struct {
	ln     net.Listener
	target string
	mode   atomic.Int32
	thaw   chan struct{} // closed at the end: frozen copies return

	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

// NewProxy starts a Proxy to target (host:port) for the rest of the test,
// in ProxyForward mode.
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
		out, err := net.Dial("tcp", p.target)
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
