package containerd

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// crispForwardRE matches crisp port-forward's line for a listener on IPv4
// loopback: "Forwarding from 127.0.0.1:PORT -> REMOTE".
var crispForwardRE = regexp.MustCompile(`Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)`)

// crisp port-forward to the busybox httpd in the bridged pod, on every
// transport containerd accepts, with a local port crisp picks (":8080").
func TestCrispPortForward(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		for _, tr := range transports {
			t.Run(tr, func(t *testing.T) {
				pf := startBackground(t, h.crispCmd(t, t.Context(), "port-forward", "--transport", tr, h.Pod, fmt.Sprintf(":%d", h.HTTPDPort)))
				m := pf.WaitFor(t, crispForwardRE, 30*time.Second)
				if m[2] != fmt.Sprint(h.HTTPDPort) {
					t.Fatalf("crisp port-forward forwards to %s, asked for %d", m[2], h.HTTPDPort)
				}
				for i := range 3 {
					body, err := httpGet(t, fmt.Sprintf("http://127.0.0.1:%s/", m[1]), 10*time.Second)
					if err != nil || !strings.Contains(body, "crisp busybox httpd") {
						t.Fatalf("GET %d through crisp port-forward --transport %s: %v, body %q", i, tr, err, body)
					}
				}
				if exited, err := pf.Exited(); exited {
					t.Fatalf("crisp port-forward exited after 3 requests: %v", err)
				}
			})
		}
	})
}

// One failed connection (nothing listens on the remote port) does not end
// the forward: the other port keeps working (client-go's PortForwarder gives
// up on every port after one failure).
func TestCrispPortForwardSurvivesFailedConnection(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		for _, tr := range transports {
			t.Run(tr, func(t *testing.T) {
				good, bad := freePort(t), freePort(t)
				pf := startBackground(t, h.crispCmd(t, t.Context(), "port-forward", "--transport", tr, h.Pod,
					fmt.Sprintf("%d:%d", good, h.HTTPDPort), fmt.Sprintf("%d:1", bad)))
				pf.WaitFor(t, regexp.MustCompile(fmt.Sprintf(`Forwarding from 127\.0\.0\.1:%d -> 1\b`, bad)), 30*time.Second)
				pf.WaitFor(t, regexp.MustCompile(fmt.Sprintf(`Forwarding from 127\.0\.0\.1:%d -> %d`, good, h.HTTPDPort)), 30*time.Second)
				if body, err := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/", bad), time.Second); err == nil {
					t.Fatalf("GET through the forward to port 1, where nothing listens, worked: %q", body)
				}
				for i := range 3 {
					body, err := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/", good), 10*time.Second)
					if err != nil || !strings.Contains(body, "crisp busybox httpd") {
						t.Fatalf("GET %d after a failed connection, --transport %s: %v, body %q", i, tr, err, body)
					}
				}
			})
		}
	})
}

// 64 MiB downloaded through crisp port-forward arrive intact on every transport.
func TestCrispPortForwardIntegrity64MiB(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		const size = 64 << 20
		// The file lives in the httpd container's own filesystem, once per run.
		r := h.crictl(t, "exec", h.HTTPDCtr, "sh", "-c",
			fmt.Sprintf("[ -s /var/www/big ] || yes crisp-integrity | head -c %d > /var/www/big", size))
		if r.ExitCode != 0 {
			t.Fatalf("writing /var/www/big in the httpd container: %v", r)
		}
		want := bytes.Repeat([]byte("crisp-integrity\n"), size/16+1)[:size]
		for _, tr := range transports {
			t.Run(tr, func(t *testing.T) {
				pf := startBackground(t, h.crispCmd(t, t.Context(), "port-forward", "--transport", tr, h.Pod, fmt.Sprintf(":%d", h.HTTPDPort)))
				m := pf.WaitFor(t, crispForwardRE, 30*time.Second)
				body, err := httpGet(t, fmt.Sprintf("http://127.0.0.1:%s/big", m[1]), commandTimeout)
				if err != nil || body != string(want) {
					t.Fatalf("GET /big (64 MiB) through crisp port-forward --transport %s: %v; got %d bytes, equal %v",
						tr, err, len(body), body == string(want))
				}
			})
		}
	})
}

// Port-forward into the host-network pod reaches the host's loopback: a
// busybox httpd of that pod on a free loopback port, through crictl and crisp.
func TestPortForwardHostNetwork(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		port := freePort(t)
		h.newContainer(t, ContainerSpec{Name: "hostnet-httpd", HostNetwork: true,
			Command: []string{"httpd", "-f", "-p", fmt.Sprintf("127.0.0.1:%d", port), "-h", "/var/www"}})
		if body, err := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/", port), 20*time.Second); err != nil || !strings.Contains(body, "crisp busybox httpd") {
			t.Fatalf("the host-network httpd on 127.0.0.1:%d: %v, body %q", port, err, body)
		}
		clients := map[string]func(local int) *Background{
			"crictl": func(local int) *Background {
				return startBackground(t, h.crictlCmd(t, t.Context(), "port-forward", h.HostnetPod, fmt.Sprintf("%d:%d", local, port)))
			},
		}
		for _, tr := range transports {
			clients["crisp-"+tr] = func(local int) *Background {
				return startBackground(t, h.crispCmd(t, t.Context(), "port-forward", "--transport", tr, h.HostnetPod, fmt.Sprintf("%d:%d", local, port)))
			}
		}
		for name, start := range clients {
			t.Run(name, func(t *testing.T) {
				local := freePort(t)
				pf := start(local)
				pf.WaitFor(t, regexp.MustCompile(fmt.Sprintf(`Forwarding from 127\.0\.0\.1:%d -> %d`, local, port)), 30*time.Second)
				body, err := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/", local), 10*time.Second)
				if err != nil || !strings.Contains(body, "crisp busybox httpd") {
					t.Fatalf("GET through %s port-forward to the host-network pod: %v, body %q", name, err, body)
				}
			})
		}
	})
}
