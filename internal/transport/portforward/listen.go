package portforward

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
)

// PortMapping is one forwarded port: Local 0 picks a free port.
type PortMapping struct {
	Local, Remote uint16
}

// LocalListener is a listening local socket and the remote port it forwards to.
type LocalListener struct {
	net.Listener
	Remote uint16
}

// Port is the local port the listener got.
func (l LocalListener) Port() uint16 {
	if a, ok := l.Addr().(*net.TCPAddr); ok {
		return uint16(a.Port)
	}
	return 0
}

// ListenLocal opens a TCP listener for every mapping on every address. An
// address is an IP or "localhost", which means 127.0.0.1 and ::1, either of
// which may be missing on a host (but not both). A local port 0 picks a free
// port on the first address and uses it on the others. On error every
// listener opened so far is closed.
func ListenLocal(addresses []string, mappings []PortMapping) ([]LocalListener, error) {
	type target struct {
		ip       string
		optional bool // part of localhost: may be missing
	}
	var targets []target
	seen := map[string]int{} // IP -> index in targets
	add := func(t target) {
		if i, dup := seen[t.ip]; dup {
			// Named twice (localhost and 127.0.0.1): listen once, and
			// only optionally if both say so.
			targets[i].optional = targets[i].optional && t.optional
			return
		}
		seen[t.ip] = len(targets)
		targets = append(targets, t)
	}
	for _, a := range addresses {
		if strings.EqualFold(a, "localhost") {
			add(target{"127.0.0.1", true})
			add(target{"::1", true})
			continue
		}
		ip := net.ParseIP(a)
		if ip == nil {
			return nil, fmt.Errorf("port-forward: address %q is neither an IP address nor localhost", a)
		}
		add(target{ip: ip.String()})
	}
	var out []LocalListener
	fail := func(err error) ([]LocalListener, error) {
		for _, l := range out {
			_ = l.Close()
		}
		return nil, err
	}
	for _, m := range mappings {
		local := m.Local
		opened := 0
		for _, t := range targets {
			addr := net.JoinHostPort(t.ip, fmt.Sprint(local))
			l, err := net.Listen("tcp", addr)
			if err != nil {
				if t.optional && pfAddressMissing(err) {
					continue
				}
				if errors.Is(err, syscall.EADDRINUSE) {
					return fail(fmt.Errorf("port-forward: local port %d on %s is already in use: free it or pick another local port (LOCAL:%d, or :%d for a free one)", local, t.ip, m.Remote, m.Remote))
				}
				return fail(fmt.Errorf("port-forward: listening on %s: %w", addr, err))
			}
			ll := LocalListener{Listener: l, Remote: m.Remote}
			out = append(out, ll)
			opened++
			if local == 0 {
				local = ll.Port()
			}
		}
		if opened == 0 {
			return fail(fmt.Errorf("port-forward: could not listen on any of %s for remote port %d", strings.Join(addresses, ", "), m.Remote))
		}
	}
	return out, nil
}

// pfAddressMissing tells "this host has no such address" (no IPv6 loopback,
// say) from real failures.
func pfAddressMissing(err error) bool {
	return errors.Is(err, syscall.EADDRNOTAVAIL) || errors.Is(err, syscall.EAFNOSUPPORT) || errors.Is(err, syscall.EPROTONOSUPPORT)
}
