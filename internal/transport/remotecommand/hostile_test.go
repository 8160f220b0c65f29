package remotecommand

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/streaming/pkg/httpstream"
	streamspdy "k8s.io/streaming/pkg/httpstream/spdy"

	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/testsupport/toyshell"
	"github.com/crisp-cri/crisp/internal/transport"
)

// hostileServer is a streaming server written to misbehave after a proper
// SPDY upgrade to v4.channel.k8s.io:
//
//   - never-accept: reads every stream request, answers none;
//   - no-status: stdout says "hi" and ends, stderr ends, and the error
//     stream neither carries a status nor ends;
//   - flood-error: the error stream carries up to 256 MiB of junk;
//   - reset: as no-status, then the connection is reset (RST).
type hostileServer struct {
	srv  *httptest.Server
	mode string
	conn atomic.Pointer[net.TCPConn] // the hijacked connection (reset)
	wg   sync.WaitGroup
	stop chan struct{}
	// created is closed once stderr, the last stream, was served: a flood
	// before then would be a stalled session, not a flooded status.
	created     chan struct{}
	createdOnce sync.Once
}

func newHostileServer(t *testing.T, mode string) *hostileServer {
	t.Helper()
	h := &hostileServer{mode: mode, stop: make(chan struct{}), created: make(chan struct{})}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(func() {
		close(h.stop)
		h.srv.CloseClientConnections()
		h.srv.Close()
		h.wg.Wait()
	})
	return h
}

func (h *hostileServer) source() transport.URLSource {
	return func(context.Context) (string, error) { return h.srv.URL + "/exec/x", nil }
}

func (h *hostileServer) serve(w http.ResponseWriter, _ *http.Request) {
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer func() { _ = conn.Close() }()
	if tc, ok := conn.(*net.TCPConn); ok {
		h.conn.Store(tc)
	}
	_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n" +
		headerProtocolVersion + ": " + transport.ExecProtocolV4 + "\r\n\r\n")
	_ = rw.Flush()
	if h.mode == "never-accept" {
		_, _ = io.Copy(io.Discard, bufio.NewReader(conn))
		return
	}
	sc, err := streamspdy.NewServerConnection(&bufferedConn{Conn: conn, r: rw.Reader}, func(s httpstream.Stream, replySent <-chan struct{}) error {
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			select {
			case <-replySent:
			case <-h.stop:
				return
			}
			h.stream(s)
		}()
		return nil
	})
	if err != nil {
		return
	}
	select {
	case <-sc.CloseChan():
	case <-h.stop:
	}
	_ = sc.Close()
}

func (h *hostileServer) stream(s httpstream.Stream) {
	switch s.Headers().Get("streamType") {
	case "stdout":
		_, _ = s.Write([]byte("hi\n"))
		_ = s.Close()
	case "stderr":
		_ = s.Close()
		h.createdOnce.Do(func() { close(h.created) })
	case "error":
		if h.mode == "reset" {
			select {
			case <-h.created:
			case <-h.stop:
				return
			}
			time.Sleep(100 * time.Millisecond) // stdout's "hi" is on its way
			if tc := h.conn.Load(); tc != nil {
				_ = tc.SetLinger(0) // close with a reset
				_ = tc.Close()
			}
			return
		}
		if h.mode != "flood-error" {
			return // no status, no end
		}
		select {
		case <-h.created:
		case <-h.stop:
			return
		}
		junk := []byte(strings.Repeat("x", 64<<10))
		for range 256 << 20 / len(junk) {
			if _, err := s.Write(junk); err != nil {
				return
			}
		}
		_ = s.Close()
	}
}

// bufferedConn reads what the hijack's reader holds first.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func hostileExec(t *testing.T, mode string, cfg transport.Config) error {
	t.Helper()
	h := newHostileServer(t, mode)
	offers, err := transport.ExecOffers(transport.SPDY, transport.ExecProtocolV4)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	streams := Streams{Stdout: io.Discard, Stderr: io.Discard}
	_, err = Stream(ctx, "exec", h.source(), offers, cfg, streams)
	if ctx.Err() != nil {
		t.Fatalf("the session hung until the test's deadline: %v", err)
	}
	var coded interface{ ExitStatus() int }
	if errors.As(err, &coded) {
		t.Errorf("the failure carries exit status %d: it would pass for the remote command's", coded.ExitStatus())
	}
	return err
}

// A server that upgrades and never accepts a stream: the session fails
// after --request-timeout (not a fixed 30s), saying what to raise.
func TestHostileNeverAccepts(t *testing.T) {
	err := hostileExec(t, "never-accept", transport.Config{UpgradeTimeout: 500 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "did not accept") || !strings.Contains(err.Error(), "--request-timeout") {
		t.Fatalf("err = %v, want the unaccepted streams naming --request-timeout", err)
	}
}

// Output ended, status never came: crisp's failure after the bound.
func TestHostileNoStatus(t *testing.T) {
	old := statusAfterOutput
	statusAfterOutput = 300 * time.Millisecond
	t.Cleanup(func() { statusAfterOutput = old })
	err := hostileExec(t, "no-status", transport.Config{UpgradeTimeout: 5 * time.Second})
	if !errors.Is(err, ErrNoStatus) || !strings.Contains(err.Error(), "output ended") {
		t.Fatalf("err = %v, want ErrNoStatus saying the output ended", err)
	}
}

// The connection reset before the status: crisp says the runtime dropped
// the stream, and how the connection ended.
func TestHostileResetBeforeStatus(t *testing.T) {
	err := hostileExec(t, "reset", transport.Config{UpgradeTimeout: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "without the command's exit status") || !strings.Contains(err.Error(), "reset by peer") {
		t.Fatalf("err = %v, want the dropped stream with the connection's reset", err)
	}
}

// 256 MiB on the error stream: cut at maxStatus with a clear error, and
// memory stays far below what was sent.
func TestHostileErrorFlood(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := hostileExec(t, "flood-error", transport.Config{UpgradeTimeout: 5 * time.Second})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, errStatusTooLong) {
		t.Fatalf("err = %v, want the error stream cut", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("the session allocated %d MiB reading a flooded error stream", grew>>20)
	}
	t.Log(fmt.Sprint(err))
}

// The mock's withhold-status fault (its output ends, its status never
// comes): crisp ends the session with ErrNoStatus after the bound, on
// SPDY v4, as against the hostile server above.
func TestMockWithholdStatus(t *testing.T) {
	old := statusAfterOutput
	statusAfterOutput = 300 * time.Millisecond
	t.Cleanup(func() { statusAfterOutput = old })
	fault, err := streamserver.ParseFault(streamserver.FaultWithholdStatus)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := streamserver.New(streamserver.Config{Addr: "127.0.0.1:0", Profile: streamserver.ProfileFull, Faults: []streamserver.Fault{fault}}, &toyshell.Shell{})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	src := func(context.Context) (string, error) {
		resp, err := srv.GetExec(&runtimeapi.ExecRequest{ContainerId: "ctr", Cmd: []string{"echo", "hi"}, Stdout: true, Stderr: true})
		if err != nil {
			return "", err
		}
		return resp.Url, nil
	}
	offers, err := transport.ExecOffers(transport.SPDY, transport.ExecProtocolV4)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out strings.Builder
	_, err = Stream(ctx, "exec", src, offers, transport.Config{UpgradeTimeout: 5 * time.Second}, Streams{Stdout: &out, Stderr: io.Discard})
	if ctx.Err() != nil {
		t.Fatal("the session hung until the test's deadline")
	}
	if !errors.Is(err, ErrNoStatus) {
		t.Fatalf("err = %v, want ErrNoStatus", err)
	}
	if out.String() != "hi\n" {
		t.Errorf("stdout %q, want the command's output before the missing status", out.String())
	}
}
