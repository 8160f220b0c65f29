package mockruntime

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// portProxy does for one of a pod's port mappings what the CNI portmap
// plugin does on a node: connections to the host port reach the container
// port. Pods of the mock share the host loopback, so the container port is
// 127.0.0.1:ContainerPort, or the port a web server moved to (pod.movedPorts). It listens on the mapping's host IP, or on
// 127.0.0.1 when it names none (the mock serves nothing beyond loopback
// unless asked).
type portProxy struct {
	lis           net.Listener
	pod           *pod
	containerPort int32

	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// startPortProxies listens for every TCP mapping with a host port other
// than its container port (a host port equal to it is the container's own
// listener already, since pods share the host network).
func (r *Runtime) startPortProxies(pd *pod, mappings []*runtimeapi.PortMapping) ([]*portProxy, error) {
	var out []*portProxy
	for _, m := range mappings {
		if m.GetHostPort() <= 0 || m.GetHostPort() == m.GetContainerPort() || m.GetProtocol() != runtimeapi.Protocol_TCP {
			continue
		}
		host := m.GetHostIp()
		if host == "" {
			host = "127.0.0.1"
		}
		addr := net.JoinHostPort(host, strconv.Itoa(int(m.GetHostPort())))
		lis, err := net.Listen("tcp", addr)
		if err != nil {
			closeProxies(out)
			return nil, fmt.Errorf("map host port %s to container port %d: %w", addr, m.GetContainerPort(), err)
		}
		p := &portProxy{lis: lis, pod: pd, containerPort: m.GetContainerPort(), conns: map[net.Conn]struct{}{}}
		r.goTracked(func() { p.serve(r) })
		out = append(out, p)
	}
	return out, nil
}

func closeProxies(ps []*portProxy) {
	for _, p := range ps {
		p.close()
	}
}

func (p *portProxy) serve(r *Runtime) {
	for {
		c, err := p.lis.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			_ = c.Close()
			return
		}
		r.goTracked(func() { p.relay(c) })
	}
}

// track records an accepted connection; false once the proxy is closed.
func (p *portProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *portProxy) untrack(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
}

// relay copies both ways between c and the container port, passing
// half-closes on.
func (p *portProxy) relay(c net.Conn) {
	defer p.untrack(c)
	defer func() { _ = c.Close() }()
	// Looked up per connection: the container's web server may have moved
	// the port when it started (pod.movedPorts).
	up, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p.pod.loopbackPort(p.containerPort))))
	if err != nil {
		return
	}
	defer func() { _ = up.Close() }()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := io.Copy(up, c); err != nil {
			// c was cut (the proxy closed): end the other way too.
			_ = up.Close()
			return
		}
		_ = up.(*net.TCPConn).CloseWrite()
	}()
	_, _ = io.Copy(c, up)
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	wg.Wait()
}

// close stops listening and cuts the open connections.
func (p *portProxy) close() {
	_ = p.lis.Close()
	p.mu.Lock()
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for c := range conns {
		_ = c.Close()
	}
}
