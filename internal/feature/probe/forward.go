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

// probeForward makes the handshake, opening a connection to the target's
// port; the registry's port-forward checks use it and open their own.
func (p *Prober) probeForward(ctx context.Context, t Target, proto Protocol) Result {
	res := Result{Call: CallPortForward, Protocol: proto}
	a := p.attemptFor(CallPortForward, t, proto)
	ctx1, cancel := context.WithTimeout(ctx, p.timeout())
	defer cancel()
	start := time.Now()
	url, err := p.URLs.PortForward(ctx1, &runtimeapi.PortForwardRequest{PodSandboxId: t.PodID, Port: portList(t.Port)})
	res.RPC = Millis(time.Since(start))
	if err != nil {
		recordRPCError(ctx1, &res, err)
		return res
	}
	stop := p.waiting(CallPortForward, proto)
	hs, conn, err := p.Streamer.Forward(ctx1, url, proto, t.Port)
	stop()
	recordHandshake(&res, hs, err)
	if !hs.Accepted {
		return res
	}
	a.First = &FirstSession{Ctx: ctx1, Err: err, Conn: conn}
	if !p.SkipChecks {
		res.Checks = a.checks(ctx, SuiteProbe)
	}
	if a.First.Conn != nil {
		_ = a.First.Conn.Close() // an error closing or writing here has nowhere better to go
	}
	return res
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
