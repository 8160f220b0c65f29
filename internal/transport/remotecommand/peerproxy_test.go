package remotecommand

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"

	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/transport"
)

// What peerProxy does with the bytes it reads.
const (
	proxyForward int32 = iota
	proxySwallow       // reads both ways and drops it all, never closes: packets dropped both ways
	proxyFreeze        // reads nothing more and sends nothing: a runtime stopped with SIGSTOP
)

// peerProxy stands between crisp and the mock's streaming server, on
// loopback, and can stop carrying bytes mid-session without closing
// anything, as a cut network or a frozen runtime would.
type peerProxy struct {
	t      *testing.T
	ln     net.Listener
	target string
	mode   atomic.Int32
	thaw   chan struct{} // closed at the end: frozen copies return

	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func newPeerProxy(t *testing.T, target string) *peerProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &peerProxy{t: t, ln: ln, target: target, thaw: make(chan struct{})}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *peerProxy) close() {
	_ = p.ln.Close()
	close(p.thaw)
	p.mu.Lock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *peerProxy) accept() {
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

func (p *peerProxy) copy(dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		if p.mode.Load() == proxyFreeze {
			<-p.thaw
			return
		}
		n, err := src.Read(buf)
		if err != nil {
			_ = dst.Close()
			return
		}
		switch p.mode.Load() {
		case proxySwallow:
			continue
		case proxyFreeze:
			<-p.thaw
			return
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			_ = src.Close()
			return
		}
	}
}

// peerBackend runs the commands the liveness tests need, in the mock's
// streaming server:
//   - wait: writes "ready\n", then waits for the test's end;
//   - quiet D: writes "begin\n", is silent for D, writes "end\n";
//   - bulk N: writes N bytes ('a' to 'z' over and over).
type peerBackend struct{ done chan struct{} }

func (b peerBackend) Exec(ctx context.Context, _ string, cmd []string, _ io.Reader, out, _ io.WriteCloser, _ bool, _ <-chan remotecommandserver.TerminalSize) error {
	switch cmd[0] {
	case "wait":
		if _, err := io.WriteString(out, "ready\n"); err != nil {
			return err
		}
		select {
		case <-b.done:
		case <-ctx.Done():
		}
	case "quiet":
		d, _ := time.ParseDuration(cmd[1])
		if _, err := io.WriteString(out, "begin\n"); err != nil {
			return err
		}
		select {
		case <-time.After(d):
		case <-b.done:
		}
		_, err := io.WriteString(out, "end\n")
		return err
	case "bulk":
		var n int
		for _, c := range cmd[1] {
			n = n*10 + int(c-'0')
		}
		_, err := io.Copy(out, io.LimitReader(&alphabet{}, int64(n)))
		return err
	}
	return nil
}

func (peerBackend) Attach(context.Context, string, io.Reader, io.WriteCloser, io.WriteCloser, bool, <-chan remotecommandserver.TerminalSize) error {
	return errors.New("no attach here")
}

func (peerBackend) PortForward(context.Context, string, int32, io.ReadWriteCloser) error {
	return errors.New("no port-forward here")
}

// alphabet reads 'a' to 'z' over and over.
type alphabet struct{ n int }

func (a *alphabet) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a' + byte((a.n+i)%26)
	}
	a.n += len(p)
	return len(p), nil
}

// peerServer starts the mock's streaming server (every protocol) with
// peerBackend behind a peerProxy; source makes URLs for cmd that go through
// the proxy.
func peerServer(t *testing.T) (proxy *peerProxy, source func(cmd ...string) transport.URLSource) {
	t.Helper()
	done := make(chan struct{})
	srv, err := streamserver.New(streamserver.Config{Addr: "127.0.0.1:0", Profile: streamserver.ProfileFull}, peerBackend{done: done})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		close(done)
		_ = srv.Close()
	})
	proxy = newPeerProxy(t, srv.Addr())
	source = func(cmd ...string) transport.URLSource {
		return func(context.Context) (string, error) {
			resp, err := srv.GetExec(&runtimeapi.ExecRequest{ContainerId: "ctr", Cmd: cmd, Stdout: true})
			if err != nil {
				return "", err
			}
			return strings.Replace(resp.Url, srv.Addr(), proxy.ln.Addr().String(), 1), nil
		}
	}
	return proxy, source
}
