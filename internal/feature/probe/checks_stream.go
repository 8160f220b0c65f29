package probe

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The attach and port-forward checks of the registry (checks.go).

// probeAttachOutput judges what the handshake's attach session read.
func probeAttachOutput(_ context.Context, a *Attempt) Check {
	f := a.First
	switch {
	case f.Stdout != "":
		return Check{Outcome: Pass, Detail: fmt.Sprintf("read %d bytes from the main process", len(f.Stdout))}
	case f.Expired:
		return Check{Outcome: Skip, Detail: fmt.Sprintf("the main process printed nothing within %s%s (attach probes only read)", f.Window, f.QuietNote)}
	}
	return Check{Outcome: Fail, Detail: fmt.Sprintf("the stream ended without output: %v", f.Err)}
}

// probeRoundTrip echoes a payload on the connection the handshake opened.
func probeRoundTrip(_ context.Context, a *Attempt) Check {
	f, port := a.First, a.Target.Port
	conn := f.Conn
	f.Conn = nil // this check closes it
	if port == 0 {
		if conn != nil {
			_ = conn.Close() // an error closing or writing here has nowhere better to go
		}
		return Check{Outcome: Skip, Detail: "no --port given"}
	}
	if f.Err != nil || conn == nil {
		return Check{Outcome: Fail, Detail: fmt.Sprintf("could not open a connection to port %d: %v", port, f.Err)}
	}
	a.roundTripped = true
	got, err := roundTrip(f.Ctx, conn, []byte(probePayload))
	switch {
	case string(got) == probePayload:
		return Check{Outcome: Pass, Detail: fmt.Sprintf("port %d echoed %d bytes", port, len(got))}
	case len(got) > 0:
		return Check{Outcome: Pass, Detail: fmt.Sprintf("port %d answered %d bytes (not an echo server)", port, len(got))}
	}
	return Check{Outcome: Fail, Detail: fmt.Sprintf("port %d sent nothing back: %v", port, err)}
}

// probeHalfClose sends a few bytes on a fresh connection, half-closes it,
// and expects the remote's answer followed by its end: what a client
// relying on shutdown(SHUT_WR) needs.
func probeHalfClose(ctx context.Context, a *Attempt) Check {
	port := a.Target.Port
	ctx1, cancel := context.WithTimeout(ctx, a.Timeout)
	defer cancel()
	url, err := a.urls.PortForward(ctx1, &runtimeapi.PortForwardRequest{PodSandboxId: a.Target.PodID, Port: portList(port)})
	if err != nil {
		return Check{Outcome: Fail, Detail: err.Error()}
	}
	hs, conn, err := a.streamer.Forward(ctx1, url, a.Protocol, port)
	if !hs.Accepted || conn == nil {
		return Check{Outcome: Fail, Detail: fmt.Sprintf("a second connection to port %d failed: %v", port, err)}
	}
	got, ended, err := halfCloseExchange(ctx1, conn, []byte(probePayload))
	switch {
	case len(got) > 0 && ended:
		return Check{Outcome: Pass, Detail: fmt.Sprintf("after the half-close, port %d answered %d bytes and closed its side", port, len(got))}
	case len(got) > 0:
		return Check{Outcome: Fail, Detail: fmt.Sprintf("after the half-close, port %d answered %d bytes but the connection did not end within %s: %v", port, len(got), a.Timeout, err)}
	case ended:
		return Check{Outcome: Fail, Detail: fmt.Sprintf("after the half-close the connection ended without an answer from port %d: the runtime tore it down", port)}
	}
	return Check{Outcome: Fail, Detail: fmt.Sprintf("after the half-close nothing came back from port %d within %s: %v", port, a.Timeout, err)}
}

// smokeAttach reads the main process's output on a fresh attach URL.
func smokeAttach(ctx context.Context, a *Attempt) Check {
	ctx, cancelAll := context.WithTimeout(ctx, a.Timeout)
	defer cancelAll()
	window := a.quiet.window(3 * time.Second)
	wctx, cancel := context.WithTimeout(ctx, window)
	defer cancel()
	out := newWatchWriter("", nil)
	out.anyOutput = cancel
	url, err := a.urls.Attach(wctx, &runtimeapi.AttachRequest{ContainerId: a.Target.ContainerID, Stdout: true, Stderr: true})
	if err != nil {
		return Check{Outcome: Fail, Detail: err.Error()}
	}
	hs, err := a.streamer.Stream(wctx, url, a.Protocol, Session{Stdout: out, Stderr: out})
	if !hs.Accepted {
		return Check{Outcome: Fail, Detail: notAccepted(hs, err)}
	}
	switch got := out.String(); {
	case got != "":
		return Check{Outcome: Pass, Detail: fmt.Sprintf("read %d bytes from the main process", len(got))}
	case ctx.Err() == nil && wctx.Err() != nil:
		note := a.quiet.saw(a.Protocol, window)
		return Check{Outcome: Skip, Detail: fmt.Sprintf("the main process printed nothing within %s%s; run smoke on a container that prints (or use --image)", window, note)}
	}
	return Check{Outcome: Fail, Detail: fmt.Sprintf("the attach stream ended without output: %v", err)}
}

// smokeForward moves 64 KiB through a forwarded connection and back.
func smokeForward(ctx context.Context, a *Attempt) Check {
	ctx, cancel := context.WithTimeout(ctx, a.Timeout)
	defer cancel()
	port := a.Target.Port
	if port == 0 {
		return Check{Outcome: Skip, Detail: "no --port given (it must reach a TCP echo server in the pod)"}
	}
	url, err := a.urls.PortForward(ctx, &runtimeapi.PortForwardRequest{PodSandboxId: a.Target.PodID, Port: []int32{port}})
	if err != nil {
		return Check{Outcome: Fail, Detail: err.Error()}
	}
	hs, conn, err := a.streamer.Forward(ctx, url, a.Protocol, port)
	if !hs.Accepted {
		return Check{Outcome: Fail, Detail: notAccepted(hs, err)}
	}
	if err != nil || conn == nil {
		return Check{Outcome: Fail, Detail: fmt.Sprintf("could not open a connection to port %d: %v", port, err)}
	}
	payload := make([]byte, 64<<10)
	_, _ = rand.Read(payload)
	got, err := roundTrip(ctx, conn, payload)
	switch {
	case bytes.Equal(got, payload):
		return Check{Outcome: Pass, Detail: fmt.Sprintf("port %d echoed 64 KiB intact", port)}
	case len(got) > 0 && !bytes.Equal(got, payload[:min(len(got), len(payload))]):
		return Check{Outcome: Pass, Detail: fmt.Sprintf("port %d answered %d bytes (not an echo server, so integrity was not checked)", port, len(got))}
	}
	return Check{Outcome: Fail, Detail: fmt.Sprintf("sent 64 KiB to port %d, %d bytes came back: %v", port, len(got), err)}
}
