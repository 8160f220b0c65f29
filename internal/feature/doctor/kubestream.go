package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/transport/spdy"
	utilexec "k8s.io/client-go/util/exec"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/crisp-cri/crisp/internal/transport"
)

// The streaming hops of the workstation path, through the API server as
// kubectl takes them: client-go's WebSocket executor (v5.channel.k8s.io)
// with its SPDY fallback for exec and attach, the SPDY-over-WebSocket
// tunnel with its SPDY fallback for port-forward. crisp's own transport
// knows runtime URLs, not the API server's credentials (tokens, exec
// plugins, client certificates), which rest.Config carries.

// upgradeWatch hears, through a wrapper of the round tripper client-go
// upgrades with, the status the server answered the upgrade with.
type upgradeWatch struct {
	mu       sync.Mutex
	status   int
	upgraded func()
}

func (u *upgradeWatch) seen(code int) {
	u.mu.Lock()
	u.status = code
	f := u.upgraded
	u.mu.Unlock()
	if code == http.StatusSwitchingProtocols && f != nil {
		f()
	}
}

// annotate gives a refused upgrade's error the status the server
// answered, which client-go's SPDY error leaves out.
func (u *upgradeWatch) annotate(err error) error {
	if c := u.code(); err != nil && c != 0 && c != http.StatusSwitchingProtocols && statusCode(err) == 0 {
		return &upgradeStatusError{code: c, err: err}
	}
	return err
}

func (u *upgradeWatch) code() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.status
}

type watchRT struct {
	rt    http.RoundTripper
	watch *upgradeWatch
}

func (t *watchRT) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if resp != nil {
		t.watch.seen(resp.StatusCode)
	}
	return resp, err
}

// watched is the walk's REST config with the upgrade watch wrapped around
// its transports (after the credentials' own wrappers).
func (w *kubeWalker) watched(watch *upgradeWatch) *rest.Config {
	c := rest.CopyConfig(w.api.cfg)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &watchRT{rt: rt, watch: watch} })
	return c
}

// execURL is the pod's exec subresource for the walk's command.
func (w *kubeWalker) execURL() *url.URL {
	q := url.Values{"container": {w.container}, "stdout": {"true"}, "stderr": {"true"}}
	for _, c := range w.cmd {
		q.Add("command", c)
	}
	return w.api.streamURL(w.ns, w.pod, "exec", q)
}

// The executors: kubectl's, one at a time or with its fallback.
func (w *kubeWalker) wsExecutor(cfg *rest.Config, u *url.URL) (remotecommand.Executor, error) {
	return remotecommand.NewWebSocketExecutor(cfg, "GET", u.String())
}

func (w *kubeWalker) spdyExecutor(cfg *rest.Config, u *url.URL) (remotecommand.Executor, error) {
	return remotecommand.NewSPDYExecutor(cfg, "POST", u)
}

// fallbackExecutor is kubectl's: WebSocket v5, then SPDY when the
// WebSocket upgrade fails; fellBack hears that it did.
func (w *kubeWalker) fallbackExecutor(cfg *rest.Config, u *url.URL, fellBack func()) (remotecommand.Executor, error) {
	ws, err := w.wsExecutor(cfg, u)
	if err != nil {
		return nil, err
	}
	sp, err := w.spdyExecutor(cfg, u)
	if err != nil {
		return nil, err
	}
	return remotecommand.NewFallbackExecutor(ws, sp, func(err error) bool {
		fb := httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
		if fb {
			fellBack()
		}
		return fb
	})
}

// kubeUpgradeHops offers WebSocket v5 alone, then SPDY alone, each on a
// fresh exec of the command. A refusal is a note when the other is
// accepted (kubectl falls back), a failure when both are refused.
func (w *kubeWalker) kubeUpgradeHops(ctx context.Context, r *run) bool {
	type step struct {
		hop, name string
		make      func(*rest.Config, *url.URL) (remotecommand.Executor, error)
	}
	first := len(r.hops)
	var accepted []string
	for _, s := range []step{{"upgrade-websocket-v5", "WebSocket " + transport.ExecProtocolV5, w.wsExecutor}, {"upgrade-spdy", "SPDY", w.spdyExecutor}} {
		h := timed(s.hop, func(h *Hop) {
			ctx, cancel := w.bound(ctx)
			defer cancel()
			watch := &upgradeWatch{}
			u := w.execURL()
			tried := fmt.Sprintf("exec %q in %s/%s -c %s offering %s through the API server (%s)", strings.Join(w.cmd, " "), w.ns, w.pod, w.container, s.name, u.Path)
			ex, err := s.make(w.watched(watch), u)
			if err == nil {
				out := &capWriter{}
				err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: out, Stderr: out})
			}
			code := watch.code()
			err = watch.annotate(err)
			if code == 0 {
				code = statusCode(err) // a refused WebSocket returns no response to the wrapper
			}
			var exit utilexec.ExitError
			switch {
			case code == http.StatusSwitchingProtocols && (err == nil || errors.As(err, &exit) || startFailed(err)):
				// The command's fate is the exec hop's.
				h.Detail = s.name + " accepted through the API server"
				accepted = append(accepted, s.name)
			case code != 0 && code != http.StatusSwitchingProtocols, httpstream.IsUpgradeFailure(err):
				w.kubeFail(h, tried, err)
				h.Outcome = Note
				h.Detail = s.name + " refused"
				if code != 0 {
					h.Detail += fmt.Sprintf(" (HTTP %d)", code)
				}
			default:
				w.kubeFail(h, tried, err)
			}
		})
		if !r.add(h) {
			return false
		}
	}
	hops := r.hops[first:]
	if len(accepted) == 0 {
		last := &hops[len(hops)-1]
		last.Outcome = Fail
		return false
	}
	for i := range hops {
		if h := &hops[i]; h.Outcome == Note {
			h.Cause = fmt.Sprintf("the API server (or a proxy in front of it) refused this protocol: kubectl falls back to %s; %s", strings.Join(accepted, ", "), h.Cause)
			h.Fix = "nothing to fix for kubectl 1.30 and later: a fallback, not a failure"
		}
	}
	return true
}

// kubeExecHop runs the command as kubectl exec does and reads its exit.
func (w *kubeWalker) kubeExecHop(ctx context.Context) Hop {
	return timed(HopExec, func(h *Hop) {
		ctx, cancel := w.bound(ctx)
		defer cancel()
		cmd := strings.Join(w.cmd, " ")
		tried := fmt.Sprintf("kubectl exec -n %s %s -c %s -- %s, as kubectl makes it (WebSocket v5, then SPDY)", w.ns, w.pod, w.container, cmd)
		over := "over WebSocket " + transport.ExecProtocolV5
		watch := &upgradeWatch{}
		ex, err := w.fallbackExecutor(w.watched(watch), w.execURL(), func() { over = "over SPDY (after the WebSocket upgrade failed: fallback)" })
		errOut := &capWriter{}
		if err == nil {
			err = watch.annotate(ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: io.Discard, Stderr: errOut}))
		}
		var exit utilexec.ExitError
		switch {
		case err == nil:
			h.Detail = fmt.Sprintf("%q exited 0 %s", cmd, over)
		case errors.As(err, &exit):
			code := exit.ExitStatus()
			reason := err.Error()
			if e, ok := transport.ExecFailure(code, errOut.Bytes()); ok {
				code, reason = e.Code, e.Message
			}
			h.Outcome, h.Tried, h.Error, h.Signature = Fail, tried+" "+over, err.Error(), "exit "+strconv.Itoa(code)
			h.Cause, h.Fix = explainExit(code, cmd, reason)
		case startFailed(err):
			e, _ := transport.StartFailure(err.Error())
			h.Outcome, h.Tried, h.Error, h.Signature = Fail, tried+" "+over, err.Error(), "exit "+strconv.Itoa(e.Code)
			h.Cause, h.Fix = explainExit(e.Code, cmd, e.Message)
		default:
			w.kubeFail(h, tried, err)
		}
	})
}

// startFailed reports an error that says the command could not start
// (127, 126), as the runtime words it.
func startFailed(err error) bool {
	if err == nil {
		return false
	}
	_, ok := transport.StartFailure(err.Error())
	return ok
}

// kubeAttachHop attaches as kubectl attach does (stdout and stderr) and
// ends the session at the first output or after the window once
// upgraded.
func (w *kubeWalker) kubeAttachHop(ctx context.Context) Hop {
	return timed(HopAttach, func(h *Hop) {
		ctx, cancel := w.bound(ctx)
		defer cancel()
		var mu sync.Mutex
		var window *time.Timer
		upgraded := false
		watch := &upgradeWatch{upgraded: func() {
			mu.Lock()
			defer mu.Unlock()
			upgraded = true
			window = time.AfterFunc(w.attachWindow, cancel)
		}}
		defer func() {
			mu.Lock()
			defer mu.Unlock()
			if window != nil {
				window.Stop()
			}
		}()
		u := w.api.streamURL(w.ns, w.pod, "attach", url.Values{"container": {w.container}, "stdout": {"true"}, "stderr": {"true"}})
		over := "over WebSocket " + transport.ExecProtocolV5
		ex, err := w.fallbackExecutor(w.watched(watch), u, func() { over = "over SPDY (after the WebSocket upgrade failed: fallback)" })
		out := &firstOutput{seen: cancel}
		if err == nil {
			err = watch.annotate(ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: out, Stderr: out}))
		}
		mu.Lock()
		ok := upgraded
		mu.Unlock()
		if ok && (err == nil || ctx.Err() != nil) {
			h.Detail = "attached " + over
			return
		}
		if err == nil {
			err = errors.New("the attach session ended before it was upgraded")
		}
		w.kubeFail(h, fmt.Sprintf("kubectl attach -n %s %s -c %s, as kubectl makes it", w.ns, w.pod, w.container), err)
	})
}

// kubeForwardHop, with --port, forwards one connection as kubectl
// port-forward does and exchanges a few bytes with the port.
func (w *kubeWalker) kubeForwardHop(ctx context.Context) Hop {
	if w.port == 0 {
		return Hop{Name: HopPortForward, Outcome: Skip, Detail: "no --port given"}
	}
	return timed(HopPortForward, func(h *Hop) {
		ctx, cancel := w.bound(ctx)
		defer cancel()
		tried := fmt.Sprintf("kubectl port-forward -n %s %s :%d, as kubectl makes it (SPDY over WebSocket, then SPDY)", w.ns, w.pod, w.port)
		conn, over, err := w.dialForward(ctx)
		if err != nil {
			w.kubeFail(h, tried, err)
			return
		}
		defer func() { _ = conn.Close() }() // the exchange's outcome is what counts
		w.kubeExchange(ctx, h, conn, tried+" "+over, over)
	})
}

// dialForward upgrades the pod's portforward subresource as kubectl does.
// client-go's dialers take no context: the dial runs aside and a dial that
// outlives ctx is closed when it returns.
func (w *kubeWalker) dialForward(ctx context.Context) (httpstream.Connection, string, error) {
	u := w.api.streamURL(w.ns, w.pod, "portforward", nil)
	cfg := w.api.cfg
	tunnel, err := portforward.NewSPDYOverWebsocketDialerForStreaming(u, cfg)
	if err != nil {
		return nil, "", err
	}
	rt, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return nil, "", err
	}
	over := "over " + transport.PortForwardTunnel + " (SPDY tunnelled in a WebSocket)"
	var mu sync.Mutex
	dialer := portforward.NewFallbackDialerForStreaming(tunnel, spdy.NewDialerForStreaming(upgrader, &http.Client{Transport: rt}, http.MethodPost, u),
		func(err error) bool {
			fb := httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
			if fb {
				mu.Lock()
				over = "over SPDY " + transport.PortForwardSPDY + " (after the tunnel's upgrade failed: fallback)"
				mu.Unlock()
			}
			return fb
		})
	type dialed struct {
		conn httpstream.Connection
		err  error
	}
	ch := make(chan dialed, 1)
	go func() {
		conn, _, err := dialer.Dial(transport.PortForwardSPDY)
		ch <- dialed{conn, err}
	}()
	select {
	case d := <-ch:
		mu.Lock()
		defer mu.Unlock()
		return d.conn, over, d.err
	case <-ctx.Done():
		go func() {
			if d := <-ch; d.conn != nil {
				_ = d.conn.Close() // too late to be used
			}
		}()
		return nil, "", fmt.Errorf("port-forward upgrade: %w", ctx.Err())
	}
}

// kubeExchange opens one forwarded connection (its error and data
// streams, as kubectl does) and waits for an answer to the payload.
func (w *kubeWalker) kubeExchange(ctx context.Context, h *Hop, conn httpstream.Connection, tried, over string) {
	hdr := http.Header{}
	hdr.Set(corev1.StreamType, corev1.StreamTypeError)
	hdr.Set(corev1.PortHeader, strconv.Itoa(int(w.port)))
	hdr.Set(corev1.PortForwardRequestIDHeader, "0")
	errStream, err := conn.CreateStream(hdr)
	if err != nil {
		w.kubeFail(h, tried, fmt.Errorf("creating the error stream: %w", err))
		return
	}
	_ = errStream.Close() // the client never writes on it
	remote := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(errStream, 64<<10)) // what came is the message; a read error ends it
		remote <- string(b)
	}()
	hdr.Set(corev1.StreamType, corev1.StreamTypeData)
	data, err := conn.CreateStream(hdr)
	if err != nil {
		// The kubelet may have failed the port already and reset the
		// pair: its message on the error stream says why.
		err = fmt.Errorf("creating the data stream: %w", err)
	} else {
		var got []byte
		got, err = answer(ctx, resetOnClose{data}, []byte(forwardPayload), 2*time.Second)
		if len(got) > 0 {
			h.Detail = fmt.Sprintf("port %d answered %d bytes %s", w.port, len(got), over)
			return
		}
	}
	// A failed data stream means the kubelet is writing why on the error
	// stream and then closes it: wait for that (within the hop's bound; a
	// busy machine takes over a second). A quiet one gets a moment only.
	wait := ctx.Done()
	if err == nil {
		quiet, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		wait = quiet.Done()
	}
	var msg string
	select {
	case msg = <-remote:
	case <-wait:
	}
	if msg != "" {
		err = errors.New(msg)
	}
	if err == nil {
		h.Outcome = Note
		h.Detail = fmt.Sprintf("connected to port %d %s; it sent nothing back to %q within 2s (not an echo or HTTP server?)", w.port, over, strings.TrimSpace(forwardPayload))
		return
	}
	h.Outcome, h.Tried, h.Error = Fail, tried, redactTokens(err.Error())
	h.Signature = signature(err)
	h.Cause, h.Fix = explainForward(w.flavour, h.Signature, w.port)
}

// resetOnClose closes a stream both ways: answer closes its connection to
// end a read, and a stream's Close only ends the writing half.
type resetOnClose struct{ httpstream.Stream }

func (s resetOnClose) Close() error { return s.Reset() }
