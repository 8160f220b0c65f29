package portforward

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// ParsePortSpec parses [LOCAL:]REMOTE: "80" (80 on both sides), "8080:80",
// ":80" and "0:80" (a free local port).
func ParsePortSpec(spec string) (PortMapping, error) {
	bad := func(why string) (PortMapping, error) {
		return PortMapping{}, fmt.Errorf("port %q: %s; want [LOCAL:]REMOTE, e.g. 8080:80, 80, or :80 for a free local port", spec, why)
	}
	localStr, remoteStr, hasLocal := strings.Cut(spec, ":")
	if !hasLocal {
		remoteStr, localStr = spec, spec
	}
	if strings.Contains(remoteStr, ":") {
		return bad("more than one colon")
	}
	remote, err := parsePort(remoteStr)
	if err != nil {
		return bad("remote " + err.Error())
	}
	if remote == 0 {
		return bad("remote port 0 is not a port")
	}
	var local uint16
	if localStr != "" {
		if local, err = parsePort(localStr); err != nil {
			return bad("local " + err.Error())
		}
	}
	return PortMapping{Local: local, Remote: remote}, nil
}

func parsePort(s string) (uint16, error) {
	if s == "" {
		return 0, errors.New("port is empty")
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("port %q is not a number", s)
		}
	}
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("port %q is out of range (0-65535)", s)
	}
	return uint16(n), nil
}

// CheckListeners rejects local addresses ListenLocal cannot take (IP
// addresses and localhost only) and a local port given twice, before
// anything listens. Its errors name the flag or argument at fault.
func CheckListeners(addresses []string, mappings []PortMapping) error {
	if len(mappings) == 0 {
		return errors.New("port-forward: no port to forward; give [LOCAL:]REMOTE")
	}
	if len(addresses) == 0 {
		return errors.New("--address: give at least one address (default localhost)")
	}
	for _, a := range addresses {
		if !strings.EqualFold(a, "localhost") && net.ParseIP(a) == nil {
			return fmt.Errorf("--address %q: want an IP address or localhost", a)
		}
	}
	seen := map[uint16]string{}
	for _, m := range mappings {
		if m.Local == 0 {
			continue
		}
		spec := fmt.Sprintf("%d:%d", m.Local, m.Remote)
		if prev, dup := seen[m.Local]; dup {
			return fmt.Errorf("port-forward: local port %d is given twice (%s and %s)", m.Local, prev, spec)
		}
		seen[m.Local] = spec
	}
	return nil
}
