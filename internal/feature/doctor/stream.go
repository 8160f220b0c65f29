package doctor

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/base/tracefile"
	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/transport/remotecommand"
)

// The streaming hops of the node path: the Exec RPC and its URL, TCP and
// TLS to the streaming server, the upgrade on each step of --transport
// auto's order, the command's round trip, attach, and port-forward.

// streamingHops walks from the Exec RPC on, adding to r until a hop fails.
func (w *walker) streamingHops(ctx context.Context, r *run, ctr string) {
	var u *url.URL
	h := timed(HopExecRPC, func(h *Hop) {
		ctx, cancel := w.bound(ctx)
		defer cancel()
		raw, err := w.execURL(ctx, ctr)
		if err != nil {
			h.fail("CRI Exec call for container "+ctr, err, func(string) (string, string) { return explainRPC(w.rt.Flavour, "Exec") })
			return
		}
		u, err = url.Parse(raw)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			h.fail("CRI Exec call for container "+ctr, fmt.Errorf("the runtime returned a streaming URL crisp cannot use: %q", transport.Shorten(raw)), func(string) (string, string) {
				return "the runtime's streaming server address is malformed", forEach(w.rt.Flavour, func(k keys) string { return k.addr + " and " + k.port + " in " + k.where })
			})
			u = nil
			return
		}
		h.Detail = describeURL(u)
		if !isLoopback(u.Hostname()) && u.Scheme == "http" {
			h.Outcome = Warn
			h.Cause = "the streaming URL is plaintext http to a host other than loopback: the session and its token cross the network unencrypted"
			h.Fix = forEach(w.rt.Flavour, func(k keys) string { return fmt.Sprintf("%s = true with %s, in %s", k.tls, k.certs, k.where) })
		}
	})
	if !r.add(h) || u == nil {
		return
	}
	if !r.add(w.tcpHop(ctx, u)) || !r.add(w.tlsHop(ctx, u)) {
		return
	}
	if !w.upgradeHops(ctx, r, ctr) {
		return
	}
	if !r.add(w.execHop(ctx, ctr)) || !r.add(w.attachHop(ctx, ctr)) {
		return
	}
	r.add(w.forwardHop(ctx))
}

// execURL makes one Exec call for the doctor's command.
func (w *walker) execURL(ctx context.Context, ctr string) (string, error) {
	return w.c.ExecSource("doctor", &runtimeapi.ExecRequest{ContainerId: ctr, Cmd: w.cmd, Stdout: true, Stderr: true})(ctx)
}

// describeURL says what a streaming URL is, its token cut.
func describeURL(u *url.URL) string {
	where := "not loopback"
	if isLoopback(u.Hostname()) {
		where = "loopback"
	}
	return fmt.Sprintf("%s (scheme %s, host %s, port %s, %s)", tracefile.RedactURL(u.String()), u.Scheme, u.Hostname(), portOf(u), where)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// tcpHop connects to the streaming server's address and closes at once.
func (w *walker) tcpHop(ctx context.Context, u *url.URL) Hop {
	addr := net.JoinHostPort(u.Hostname(), portOf(u))
	return timed(HopTCP, func(h *Hop) {
		ctx, cancel := w.bound(ctx)
		defer cancel()
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			h.fail("TCP connect to "+addr+" (the Exec URL's host and port)", err, func(sig string) (string, string) {
				return explainTCP(w.rt.Flavour, sig, addr, isLoopback(u.Hostname()))
			})
			return
		}
		_ = conn.Close() // nothing was sent: a close error says nothing of the path
		h.Detail = "connected to " + addr
	})
}

// tlsHop, for an https URL, makes the TLS handshake crisp's streams make
// and says which certificate came and which CA verified it, or why not.
func (w *walker) tlsHop(ctx context.Context, u *url.URL) Hop {
	if u.Scheme != "https" {
		return Hop{Name: HopTLS, Outcome: Skip, Detail: u.Scheme + ": plaintext, no TLS"}
	}
	addr := net.JoinHostPort(u.Hostname(), portOf(u))
	return timed(HopTLS, func(h *Hop) {
		ctx, cancel := w.bound(ctx)
		defer cancel()
		cfg := transport.UpgradeTLS(w.tlsCfg, u.Hostname())
		d := tls.Dialer{Config: cfg}
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			err = transport.DescribeTLSError(u.Scheme+"://"+addr, err)
			h.fail(fmt.Sprintf("TLS handshake with %s for server name %q (%s)", addr, cfg.ServerName, trustedBy(cfg)), err, func(sig string) (string, string) {
				return explainTLS(w.rt.Flavour, sig)
			})
			return
		}
		cs := conn.(*tls.Conn).ConnectionState()
		_ = conn.Close() // the handshake was the point: a close error says nothing of it
		h.Detail = describeTLS(cs, cfg)
	})
}

// trustedBy says which roots a configuration verifies with.
func trustedBy(cfg *tls.Config) string {
	switch {
	case cfg.InsecureSkipVerify:
		return "verification skipped: --insecure-skip-tls-verify"
	case cfg.RootCAs == nil:
		return "verified against the system's roots"
	}
	return "verified against --tls-ca"
}

// describeTLS names the version, the chain and the CA that verified it.
func describeTLS(cs tls.ConnectionState, cfg *tls.Config) string {
	var chain []string
	for _, c := range cs.PeerCertificates {
		chain = append(chain, fmt.Sprintf("%q", c.Subject.String()))
	}
	b := fmt.Sprintf("%s, chain %s", tls.VersionName(cs.Version), strings.Join(chain, " <- "))
	if len(cs.VerifiedChains) > 0 {
		chain := cs.VerifiedChains[0]
		return b + fmt.Sprintf(", verified by CA %q (%s)", chain[len(chain)-1].Subject.String(), trustedBy(cfg))
	}
	if cfg.InsecureSkipVerify {
		return b + ", NOT verified (--insecure-skip-tls-verify)"
	}
	return b
}

// upgradeName is the hop of one step of exec's auto order:
// upgrade-websocket-v5, upgrade-spdy, upgrade-websocket-v4.
func upgradeName(s transport.Step) string {
	if s.Transport == transport.SPDY {
		return "upgrade-spdy"
	}
	spec, _ := transport.Lookup(transport.CallExec, transport.Protocol{Transport: s.Transport, Name: s.Protocols[0]})
	return fmt.Sprintf("upgrade-%s-v%d", s.Transport, spec.Version)
}

// upgradeHops offers each step of exec's auto order alone on a fresh URL
// (running the command when accepted). A refusal is provisional: a note
// when another step is accepted (the fallback crisp and kubectl make),
// a failure when none is. It reports whether the walk goes on.
func (w *walker) upgradeHops(ctx context.Context, r *run, ctr string) bool {
	steps, err := transport.Order(transport.CallExec, transport.Auto)
	if err != nil {
		return r.add(Hop{Name: "upgrade", Outcome: Fail, Error: err.Error()})
	}
	first := len(r.hops)
	accepted := []string{}
	var tried []string
	for _, s := range steps {
		h := timed(upgradeName(s), func(h *Hop) {
			ctx, cancel := w.bound(ctx)
			defer cancel()
			rpcStart := time.Now()
			raw, err := w.execURL(ctx, ctr)
			if err != nil {
				h.fail("CRI Exec call for container "+ctr, err, func(string) (string, string) { return explainRPC(w.rt.Flavour, "Exec") })
				return
			}
			rpc := time.Since(rpcStart)
			out := &capWriter{}
			att, _ := remotecommand.Try(ctx, "doctor", raw, s.Offer, w.cfg, remotecommand.Streams{Stdout: out, Stderr: out})
			tried = append(tried, fmt.Sprintf("%s at %s", s.Name, tracefile.RedactURL(raw)))
			if att.Accepted() {
				h.Detail = fmt.Sprintf("%s accepted: negotiated %s (RPC %s, upgrade %s)", s.Name, att.Protocol, Millis(rpc), Millis(att.Upgrade))
				accepted = append(accepted, s.Name)
				return
			}
			var refused *transport.RefusedError
			if errors.As(att.Err, &refused) && refused.Status != 0 {
				h.Outcome, h.Signature = Note, fmt.Sprintf("HTTP %d", refused.Status)
				h.Error = redactTokens(transport.Shorten(att.Err.Error()))
				h.Detail = fmt.Sprintf("%s refused (%s)", s.Name, transport.Shorten(refused.Reason))
				return
			}
			h.fail(fmt.Sprintf("offering %s at %s", s.Name, tracefile.RedactURL(raw)), att.Err, func(sig string) (string, string) {
				if strings.HasPrefix(sig, "tls") {
					return explainTLS(w.rt.Flavour, sig)
				}
				return explainUpgrade(w.rt.Flavour, sig)
			})
		})
		if !r.add(h) {
			return false
		}
	}
	hops := r.hops[first:]
	if len(accepted) == 0 {
		last := &hops[len(hops)-1]
		last.Outcome, last.Tried = Fail, strings.Join(tried, "; ")
		last.Cause, last.Fix = explainUpgrade(w.rt.Flavour, last.Signature)
		return false
	}
	for i := range hops {
		h := &hops[i]
		if h.Outcome != Note {
			continue
		}
		h.Cause, h.Fix = refusalMeaning(w.rt.Flavour, h.Name, accepted)
		if h.Name == "upgrade-spdy" {
			h.Outcome = Warn
		}
	}
	return true
}

// refusalMeaning words a refusal while another step was accepted.
func refusalMeaning(f Flavour, hop string, accepted []string) (string, string) {
	switch hop {
	case "upgrade-websocket-v5":
		return fmt.Sprintf("the streaming server%s speaks no WebSocket v5 (k8s.io/cri-streaming, in containerd 1.6 and 2.x and CRI-O, serves v1-v4): crisp and kubectl fall back to %s", on(f), strings.Join(accepted, ", ")),
			"nothing to fix: a fallback, not a failure"
	case "upgrade-spdy":
		return fmt.Sprintf("the streaming server%s refuses SPDY: the kubelet proxies kubectl exec, attach and port-forward to the runtime over SPDY, so those fail on this node while crisp works over %s", on(f), strings.Join(accepted, ", ")),
			"a runtime for kubelets must serve SPDY on its streaming server (every cri-streaming runtime does)"
	}
	return fmt.Sprintf("the streaming server%s refused this step; crisp and kubectl use %s", on(f), strings.Join(accepted, ", ")), "nothing to fix: a fallback, not a failure"
}

// streamToken is the single-use token of a streaming URL quoted in an
// error (the transport's errors quote URLs): a report travels further
// than a terminal, so doctor cuts it as traces do.
var streamToken = regexp.MustCompile(`(https?://[^/\s"']+/(?:exec|attach|portforward)/)[^\s/?)"';]+`)

// redactTokens cuts the streaming URLs' tokens out of msg.
func redactTokens(msg string) string {
	return streamToken.ReplaceAllString(msg, "${1}"+tracefile.Redacted)
}

// capWriter keeps the last 64 KiB of what a doctor session prints (the
// runtime's reason for a command that did not start is at the end); stdout
// and stderr may write at once.
type capWriter struct {
	mu  sync.Mutex
	buf []byte
}

const capMax = 64 << 10

func (c *capWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf = append(c.buf, p...)
	if len(c.buf) > capMax {
		c.buf = append(c.buf[:0], c.buf[len(c.buf)-capMax:]...)
	}
	return len(p), nil
}

// Bytes returns what was kept.
func (c *capWriter) Bytes() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Clone(c.buf)
}
