package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func (p *Prober) probeForward(ctx context.Context, t Target, proto Protocol) Result {
	res := Result{Call: CallPortForward, Protocol: proto}
	ctx1, cancel := context.WithTimeout(ctx, p.timeout())
	defer cancel()
	start := time.Now()
	url, err := p.URLs.PortForward(ctx1, &runtimeapi.PortForwardRequest{PodSandboxId: t.PodID, Port: portList(t.Port)})
	res.RPC = Millis(time.Since(start))
	if err != nil {
		res.Error = err.Error()
		return res
	}
	stop := p.waiting(CallPortForward, proto)
	hs, conn, err := p.Streamer.Forward(ctx1, url, proto, t.Port)
	stop()
	recordHandshake(&res, hs, err)
	if !hs.Accepted {
		return res
	}
	if t.Port == 0 || p.SkipChecks {
		if conn != nil {
			_ = conn.Close() // an error closing or writing here has nowhere better to go
		}
		if !p.SkipChecks {
			res.Checks = append(res.Checks, Check{Name: CheckRoundTrip, Outcome: Skip, Detail: "no --port given"})
		}
		return res
	}
	c := Check{Name: CheckRoundTrip}
	if err != nil || conn == nil {
		c.Outcome, c.Detail = Fail, fmt.Sprintf("could not open a connection to port %d: %v", t.Port, err)
		res.Checks = append(res.Checks, c)
		return res
	}
	got, err := roundTrip(ctx1, conn, []byte(probePayload))
	switch {
	case string(got) == probePayload:
		c.Outcome, c.Detail = Pass, fmt.Sprintf("port %d echoed %d bytes", t.Port, len(got))
	case len(got) > 0:
		c.Outcome, c.Detail = Pass, fmt.Sprintf("port %d answered %d bytes (not an echo server)", t.Port, len(got))
	default:
		c.Outcome, c.Detail = Fail, fmt.Sprintf("port %d sent nothing back: %v", t.Port, err)
	}
	res.Checks = append(res.Checks, c, p.halfCloseCheck(ctx, t, proto))
	return res
}

// halfCloseCheck sends a few bytes on a fresh connection, half-closes it,
// and expects the remote's answer followed by its end: what a client
// relying on shutdown(SHUT_WR) needs.
func (p *Prober) halfCloseCheck(ctx context.Context, t Target, proto Protocol) Check {
	c := Check{Name: CheckHalfClose}
	if !capabilities(CallPortForward, proto).HalfClose {
		c.Outcome, c.Detail = Skip, proto.String()+" (direct WebSocket port-forward) cannot carry a half-close"
		return c
	}
	ctx1, cancel := context.WithTimeout(ctx, p.timeout())
	defer cancel()
	url, err := p.URLs.PortForward(ctx1, &runtimeapi.PortForwardRequest{PodSandboxId: t.PodID, Port: portList(t.Port)})
	if err != nil {
		c.Outcome, c.Detail = Fail, err.Error()
		return c
	}
	hs, conn, err := p.Streamer.Forward(ctx1, url, proto, t.Port)
	if !hs.Accepted || conn == nil {
		c.Outcome, c.Detail = Fail, fmt.Sprintf("a second connection to port %d failed: %v", t.Port, err)
		return c
	}
	got, ended, err := halfCloseExchange(ctx1, conn, []byte(probePayload))
	switch {
	case len(got) > 0 && ended:
		c.Outcome, c.Detail = Pass, fmt.Sprintf("after the half-close, port %d answered %d bytes and closed its side", t.Port, len(got))
	case len(got) > 0:
		c.Outcome, c.Detail = Fail, fmt.Sprintf("after the half-close, port %d answered %d bytes but the connection did not end within %s: %v", t.Port, len(got), p.timeout(), err)
	case ended:
		c.Outcome, c.Detail = Fail, fmt.Sprintf("after the half-close the connection ended without an answer from port %d: the runtime tore it down", t.Port)
	default:
		c.Outcome, c.Detail = Fail, fmt.Sprintf("after the half-close nothing came back from port %d within %s: %v", t.Port, p.timeout(), err)
	}
	return c
}

// halfCloseExchange writes payload, half-closes, and reads until the
// remote ends the connection (ended) or ctx does. It closes conn.
func halfCloseExchange(ctx context.Context, conn Conn, payload []byte) (got []byte, ended bool, err error) {
	stop := closeOnDone(ctx, conn)
	defer stop()
	if _, err := conn.Write(payload); err != nil {
		return nil, false, fmt.Errorf("writing: %w", err)
	}
	if err := conn.CloseWrite(); err != nil {
		return nil, false, fmt.Errorf("half-closing: %w", err)
	}
	buf := make([]byte, 32<<10)
	for {
		n, rerr := conn.Read(buf)
		got = append(got, buf[:n]...)
		if rerr != nil {
			if ctx.Err() != nil {
				return got, false, ctx.Err()
			}
			return got, errors.Is(rerr, io.EOF), rerr
		}
	}
}

// closeOnDone closes conn when ctx ends, or at the latest when stop is
// called; stop returns once conn is closed.
func closeOnDone(ctx context.Context, conn Conn) (stop func()) {
	done, closed := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(closed)
		select {
		case <-ctx.Done():
		case <-done:
		}
		_ = conn.Close() // an error closing or writing here has nowhere better to go
	}()
	return func() {
		close(done)
		<-closed
	}
}

func portList(port int32) []int32 {
	if port == 0 {
		return nil
	}
	return []int32{port}
}

// roundTrip writes payload and reads until as many bytes came back, the
// answer stopped matching (not an echo server), the remote closed, or ctx
// ended. It closes conn.
func roundTrip(ctx context.Context, conn Conn, payload []byte) ([]byte, error) {
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := closeOnDone(ctx, conn)
	defer stop()
	writeErr := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err := conn.Write(payload)
		writeErr <- err
	}()
	buf := make([]byte, 0, len(payload))
	tmp := make([]byte, 32<<10)
	for len(buf) < len(payload) {
		n, err := conn.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if !bytes.Equal(buf, payload[:min(len(buf), len(payload))]) {
			return buf, nil // an answer, not an echo
		}
		if err != nil {
			if ctx.Err() != nil {
				return buf, fmt.Errorf("no complete answer within the attempt timeout")
			}
			select {
			case werr := <-writeErr:
				if werr != nil {
					return buf, fmt.Errorf("writing: %w", werr)
				}
			default:
			}
			return buf, err
		}
	}
	return buf, nil
}
