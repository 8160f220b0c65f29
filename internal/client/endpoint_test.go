package client

import (
	"net"
	"strings"
	"testing"
)

func TestParseEndpoint(t *testing.T) {
	long := "/" + strings.Repeat("x", 120)
	tests := []struct {
		in                string
		network, addr     string
		wantErrSubstrings []string
	}{
		{in: "unix:///run/containerd/containerd.sock", network: "unix", addr: "/run/containerd/containerd.sock"},
		{in: "/run/crio/crio.sock", network: "unix", addr: "/run/crio/crio.sock"},
		{in: "tcp://127.0.0.1:1234", network: "tcp", addr: "127.0.0.1:1234"},
		{in: "tcp://[::1]:1234", network: "tcp", addr: "[::1]:1234"},
		{in: "", wantErrSubstrings: []string{"want unix:///path/to/socket or tcp://host:port"}},
		{in: "unix://", wantErrSubstrings: []string{"has no address"}},
		{in: "tcp://", wantErrSubstrings: []string{"has no address"}},
		{in: "tcp://localhost", wantErrSubstrings: []string{"want tcp://host:port"}},
		{in: "npipe:////./pipe/containerd", wantErrSubstrings: []string{"want unix://"}},
		{in: "run/relative.sock", wantErrSubstrings: []string{"want unix://"}},
		{in: "unix://" + long, wantErrSubstrings: []string{"longer than the 107"}},
		{in: "unix:///a\x00b", wantErrSubstrings: []string{"NUL"}},
	}
	for _, tt := range tests {
		network, addr, err := parseEndpoint(tt.in)
		if len(tt.wantErrSubstrings) > 0 {
			if err == nil {
				t.Errorf("parseEndpoint(%q) = %s %s, want an error", tt.in, network, addr)
				continue
			}
			for _, s := range tt.wantErrSubstrings {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("parseEndpoint(%q) error %q lacks %q", tt.in, err, s)
				}
			}
			continue
		}
		if err != nil || network != tt.network || addr != tt.addr {
			t.Errorf("parseEndpoint(%q) = %q, %q, %v; want %q, %q", tt.in, network, addr, err, tt.network, tt.addr)
		}
	}
}

// FuzzParseEndpoint checks the parser never panics and that whatever it
// accepts is something a dialer can use. Seeds live in testdata/fuzz.
func FuzzParseEndpoint(f *testing.F) {
	for _, s := range []string{"unix:///run/containerd/containerd.sock", "tcp://127.0.0.1:10010", "/tmp/x.sock"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, endpoint string) {
		network, addr, err := parseEndpoint(endpoint)
		if err != nil {
			if !strings.Contains(err.Error(), "endpoint") {
				t.Errorf("error %q does not say it is about the endpoint", err)
			}
			return
		}
		if addr == "" || strings.ContainsRune(addr, 0) {
			t.Fatalf("parseEndpoint(%q) accepted address %q", endpoint, addr)
		}
		switch network {
		case "unix":
			if len(addr) > maxUnixPath {
				t.Fatalf("parseEndpoint(%q) accepted a %d-byte socket path", endpoint, len(addr))
			}
			if !strings.HasSuffix(endpoint, addr) {
				t.Fatalf("parseEndpoint(%q) address %q is not the endpoint's tail", endpoint, addr)
			}
		case "tcp":
			if _, _, err := net.SplitHostPort(addr); err != nil {
				t.Fatalf("parseEndpoint(%q) accepted tcp address %q: %v", endpoint, addr, err)
			}
		default:
			t.Fatalf("parseEndpoint(%q) returned network %q", endpoint, network)
		}
	})
}
