package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/transport/portforward"
	"github.com/crisp-cri/crisp/internal/transport/remotecommand"
)

// The round trips: the command over --transport auto as crisp exec runs
// it, attach's RPC and upgrade, and with --port a port-forward exchange.

// execHop runs the command over auto's order, falling back as exec does.
func (w *walker) execHop(ctx context.Context, ctr string) Hop {
	return timed(HopExec, func(h *Hop) {
		ctx, cancel := w.bound(ctx)
		defer cancel()
		out, errOut := &capWriter{}, &capWriter{}
		src := func(ctx context.Context) (string, error) { return w.execURL(ctx, ctr) }
		res, err := streamAuto(ctx, "doctor", src, w.cfg, remotecommand.Streams{Stdout: out, Stderr: errOut})
		cmd := strings.Join(w.cmd, " ")
		att, ok := res.Negotiated()
		tried := fmt.Sprintf("exec %q in container %s over --transport auto", cmd, ctr)
		if !ok {
			h.fail(tried, err, func(sig string) (string, string) { return explainUpgrade(w.rt.Flavour, sig) })
			return
		}
		over := fmt.Sprintf("over %s %s", att.Transport.Title(), att.Protocol)
		if n := len(res.Attempts); n > 1 {
			over += fmt.Sprintf(" (after %d refused: fallback)", n-1)
		}
		code, coded := exitOf(err, errOut.Bytes())
		switch {
		case err == nil:
			h.Detail = fmt.Sprintf("%q exited 0 %s", cmd, over)
		case coded:
			h.fail(tried+" "+over, err, func(string) (string, string) { return explainExit(code, cmd, reasonOf(err)) })
			h.Signature = fmt.Sprintf("exit %d", code)
		default:
			h.fail(tried+" "+over, err, func(sig string) (string, string) { return explainStream(w.rt.Flavour, sig) })
		}
	})
}

// streamAuto runs one exec or attach session over --transport auto's
// order, a fresh URL from src for each step, as crisp exec does.
func streamAuto(ctx context.Context, op string, src transport.URLSource, cfg transport.Config, s remotecommand.Streams) (remotecommand.Result, error) {
	offers, err := transport.ExecOffers(transport.Auto, "")
	if err != nil {
		return remotecommand.Result{}, err // the catalogue's own orders: cannot happen
	}
	return remotecommand.Stream(ctx, op, src, offers, cfg, s)
}

// exitOf reads a session's remote exit status: the transport's, or CRI-O's
// 255 with runc's reason on stderr (transport.ExecFailure).
func exitOf(err error, stderr []byte) (int, bool) {
	var re transport.RemoteExit
	if !errors.As(err, &re) {
		return 0, false
	}
	if e, ok := transport.ExecFailure(re.ExitStatus(), stderr); ok {
		return e.Code, true
	}
	return re.ExitStatus(), true
}

// reasonOf is the runtime's words for an exit, as short as they come.
func reasonOf(err error) string {
	var ee *transport.ExitError
	if errors.As(err, &ee) {
		return ee.Message
	}
	return transport.Shorten(err.Error())
}

// attachHop makes the Attach RPC and upgrade over auto's order; the session
// ends as soon as it is upgraded (attach only reads, and the main process
// may print nothing).
func (w *walker) attachHop(ctx context.Context, ctr string) Hop {
	return timed(HopAttach, func(h *Hop) {
		ctx, cancel := w.bound(ctx)
		defer cancel()
		// Once upgraded, the session reads until the first output or a short
		// window: ending it at the upgrade would leave the server waiting for
		// streams that never come (30 s on cri-streaming servers).
		var mu sync.Mutex
		var window *time.Timer
		cfg := w.cfg
		cfg.Upgraded = func() {
			mu.Lock()
			defer mu.Unlock()
			window = time.AfterFunc(w.attachWindow, cancel)
		}
		defer func() {
			mu.Lock()
			defer mu.Unlock()
			if window != nil {
				window.Stop()
			}
		}()
		out := &firstOutput{seen: cancel}
		src := w.c.AttachSource("doctor", &runtimeapi.AttachRequest{ContainerId: ctr, Stdout: true, Stderr: true})
		res, err := streamAuto(ctx, "doctor attach", src, cfg, remotecommand.Streams{Stdout: out, Stderr: out})
		att, ok := res.Negotiated()
		if !ok {
			h.fail("attach to container "+ctr+" over --transport auto", err, func(sig string) (string, string) {
				if len(res.Attempts) == 0 {
					return explainRPC(w.rt.Flavour, "Attach")
				}
				return explainUpgrade(w.rt.Flavour, sig)
			})
			return
		}
		h.Detail = fmt.Sprintf("upgraded over %s %s", att.Transport.Title(), att.Protocol)
	})
}

// firstOutput calls seen at the first byte written to it.
type firstOutput struct {
	once sync.Once
	seen func()
}

func (f *firstOutput) Write(p []byte) (int, error) {
	if len(p) > 0 {
		f.once.Do(f.seen)
	}
	return len(p), nil
}

// forwardPayload makes an echo server echo it and an HTTP server answer.
const forwardPayload = "crisp-doctor\r\n\r\n"

// forwardHop, with --port, makes the PortForward RPC and upgrade over
// auto's order and exchanges a few bytes with the port.
func (w *walker) forwardHop(ctx context.Context) Hop {
	if w.port == 0 {
		return Hop{Name: HopPortForward, Outcome: Skip, Detail: "no --port given"}
	}
	port := uint16(w.port) // Validate keeps it in 1-65535
	return timed(HopPortForward, func(h *Hop) {
		ctx, cancel := w.bound(ctx)
		defer cancel()
		steps, err := transport.Order(transport.CallPortForward, transport.Auto)
		if err != nil {
			h.fail("", err, nil)
			return
		}
		src := w.c.PortForwardSource("doctor", w.target.Pod)
		var refusals []string
		for _, s := range steps {
			raw, err := src(ctx, []uint16{port})
			if err != nil {
				h.fail("CRI PortForward call for pod "+w.target.Pod, err, func(string) (string, string) { return explainRPC(w.rt.Flavour, "PortForward") })
				return
			}
			sess, att, err := portforward.Connect(ctx, raw, s.Offer, []uint16{port}, w.cfg)
			var refused *transport.RefusedError
			if errors.As(err, &refused) {
				refusals = append(refusals, fmt.Sprintf("%s: HTTP %d", s.Name, refused.Status))
				continue
			}
			if err != nil {
				h.fail("port-forward upgrade offering "+s.Name, err, func(sig string) (string, string) { return explainUpgrade(w.rt.Flavour, sig) })
				return
			}
			defer func() { _ = sess.Close() }() // the exchange's outcome is what counts
			w.exchange(ctx, h, sess, port, fmt.Sprintf("over %s %s", att.Transport.Title(), att.Protocol))
			return
		}
		h.fail(fmt.Sprintf("port-forward to port %d: every step refused (%s)", port, strings.Join(refusals, "; ")), errors.New(strings.Join(refusals, "; ")),
			func(string) (string, string) { return explainUpgrade(w.rt.Flavour, "HTTP") })
		h.Signature = "refused"
	})
}

// exchange opens a connection to port, writes the payload and waits for
// any answer; no answer is a failure only when the runtime said why.
func (w *walker) exchange(ctx context.Context, h *Hop, sess portforward.ForwardSession, port uint16, over string) {
	tried := fmt.Sprintf("port-forward to port %d of pod %s %s", port, w.target.Pod, over)
	conn, err := sess.Open(ctx, port)
	if err != nil {
		h.fail(tried, err, func(sig string) (string, string) { return explainForward(w.rt.Flavour, sig, w.port) })
		return
	}
	defer func() { _ = conn.Close() }() // the answer, or its absence, is what counts
	got, err := answer(ctx, conn, []byte(forwardPayload), 2*time.Second)
	switch {
	case len(got) > 0:
		h.Detail = fmt.Sprintf("port %d answered %d bytes %s", port, len(got), over)
		return
	case err == nil:
		h.Outcome = Note
		h.Detail = fmt.Sprintf("connected to port %d %s; it sent nothing back to %q within 2s (not an echo or HTTP server?)", port, over, strings.TrimSpace(forwardPayload))
		return
	}
	if rerr := conn.RemoteError(); rerr != nil {
		err = rerr
	}
	h.fail(tried, err, func(sig string) (string, string) { return explainForward(w.rt.Flavour, sig, w.port) })
}

// answer writes payload and reads until the first bytes come back, the
// connection ends (the error), or quiet passes with nothing (nil error,
// no bytes; conn is closed then, to end the read).
func answer(ctx context.Context, conn io.ReadWriteCloser, payload []byte, quiet time.Duration) ([]byte, error) {
	type read struct {
		b   []byte
		err error
	}
	ch := make(chan read, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := conn.Write(payload); err != nil {
			ch <- read{err: err}
			return
		}
		buf := make([]byte, 4096)
		n, err := conn.Read(buf)
		ch <- read{buf[:n], err}
	}()
	t := time.NewTimer(quiet)
	defer t.Stop()
	select {
	case r := <-ch:
		wg.Wait()
		if len(r.b) > 0 {
			return r.b, nil
		}
		if r.err == nil {
			r.err = io.ErrUnexpectedEOF
		}
		return nil, r.err
	case <-t.C:
		_ = conn.Close() // ends the read; nothing came, so nothing is lost
		wg.Wait()
		return nil, nil
	case <-ctx.Done():
		_ = conn.Close() // as above
		wg.Wait()
		return nil, ctx.Err()
	}
}
