package streamserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"                                //nolint:depguard // test-only: the clients crictl and critest use, as independent checks of the server
	clientportforward "k8s.io/client-go/tools/portforward" //nolint:depguard // test-only: the clients crictl and critest use, as independent checks of the server
	"k8s.io/client-go/tools/remotecommand"                 //nolint:depguard // test-only: the clients crictl and critest use, as independent checks of the server
	clientspdy "k8s.io/client-go/transport/spdy"           //nolint:depguard // test-only: the clients crictl and critest use, as independent checks of the server
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	utilexec "k8s.io/utils/exec"
)

// ---- client-go executors, pinned to one protocol ----

type executorKind struct {
	name     string
	protocol string
	ws       bool
}

func (k executorKind) executor(t testing.TB, cfg *rest.Config, u *url.URL) remotecommand.Executor {
	t.Helper()
	if cfg == nil {
		cfg = &rest.Config{}
	}
	var (
		ex  remotecommand.Executor
		err error
	)
	if k.ws {
		ex, err = remotecommand.NewWebSocketExecutorForProtocols(cfg, "GET", u.String(), k.protocol)
	} else {
		transport, upgrader, rerr := clientspdy.RoundTripperFor(cfg)
		if rerr != nil {
			t.Fatal(rerr)
		}
		ex, err = remotecommand.NewSPDYExecutorForProtocols(transport, upgrader, "POST", u, k.protocol)
	}
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

var (
	spdyExecV2 = executorKind{"spdy-v2", "v2.channel.k8s.io", false}
	spdyExecV4 = executorKind{"spdy-v4", "v4.channel.k8s.io", false}
	spdyExecV5 = executorKind{"spdy-v5", "v5.channel.k8s.io", false}
	wsExecV4   = executorKind{"ws-v4", "v4.channel.k8s.io", true}
	wsExecV5   = executorKind{"ws-v5", "v5.channel.k8s.io", true}
)

type execResult struct {
	stdout, stderr string
	err            error
}

func runExec(t *testing.T, srv Server, k executorKind, req *runtimeapi.ExecRequest, opts remotecommand.StreamOptions) execResult {
	t.Helper()
	u := execURL(t, srv, req)
	var out, errb bytes.Buffer
	if req.Stdout {
		opts.Stdout = &out
	}
	if req.Stderr {
		opts.Stderr = &errb
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := k.executor(t, nil, u).StreamWithContext(ctx, opts)
	return execResult{out.String(), errb.String(), err}
}

func exitCode(err error) (int, bool) {
	var ee utilexec.ExitError
	if errors.As(err, &ee) && ee.Exited() {
		return ee.ExitStatus(), true
	}
	return 0, false
}

// TestExecOutputAndExitCodes: stdout, stderr and exit codes over SPDY v4/v5
// and WebSocket v4/v5, on every profile that speaks them.
func TestExecOutputAndExitCodes(t *testing.T) {
	cases := []struct {
		profile Profile
		kinds   []executorKind
	}{
		{ProfileFull, []executorKind{spdyExecV4, spdyExecV5, wsExecV4, wsExecV5}},
		{ProfileCRIStreaming, []executorKind{spdyExecV4, wsExecV4}},
		{ProfileConmonRS, []executorKind{wsExecV5}},
	}
	for _, c := range cases {
		srv, _ := startServer(t, Config{Profile: c.profile})
		for _, k := range c.kinds {
			t.Run(string(c.profile)+"/"+k.name, func(t *testing.T) {
				r := runExec(t, srv, k, &runtimeapi.ExecRequest{Cmd: []string{"echo", "hello", "world"}, Stdout: true, Stderr: true}, remotecommand.StreamOptions{})
				if r.err != nil || r.stdout != "hello world\n" || r.stderr != "" {
					t.Fatalf("echo: %+v", r)
				}
				r = runExec(t, srv, k, &runtimeapi.ExecRequest{Cmd: []string{"stderr", "oops"}, Stdout: true, Stderr: true}, remotecommand.StreamOptions{})
				if r.err != nil || r.stdout != "" || r.stderr != "oops\n" {
					t.Fatalf("stderr: %+v", r)
				}
				r = runExec(t, srv, k, &runtimeapi.ExecRequest{Cmd: []string{"exit", "7"}, Stdout: true, Stderr: true}, remotecommand.StreamOptions{})
				if code, ok := exitCode(r.err); !ok || code != 7 {
					t.Fatalf("exit 7: got %v (%T)", r.err, r.err)
				}
				r = runExec(t, srv, k, &runtimeapi.ExecRequest{Cmd: []string{"fail"}, Stdout: true, Stderr: true}, remotecommand.StreamOptions{})
				if _, ok := exitCode(r.err); ok || r.err == nil || !strings.Contains(r.err.Error(), "executable file not found") {
					t.Fatalf("fail: want a plain error naming the cause, got %v (%T)", r.err, r.err)
				}
			})
		}
	}
}

// TestExecExitTextBeforeV4: v1-v3 carry the exit as error text only.
func TestExecExitTextBeforeV4(t *testing.T) {
	for _, p := range []Profile{ProfileLegacy, ProfileFull, ProfileCRIStreaming} {
		srv, _ := startServer(t, Config{Profile: p})
		r := runExec(t, srv, spdyExecV2, &runtimeapi.ExecRequest{Cmd: []string{"exit", "3"}, Stdout: true}, remotecommand.StreamOptions{})
		if _, ok := exitCode(r.err); ok {
			t.Fatalf("%s: v2 reported an exit code: %v", p, r.err)
		}
		if r.err == nil || !strings.Contains(r.err.Error(), "command terminated with non-zero exit code: exit status 3") {
			t.Fatalf("%s: v2 error text: %v", p, r.err)
		}
	}
}

// TestStdinEOF: the end of stdin reaches the process over SPDY (half-close)
// and WebSocket v5 (CLOSE on channel 0).
func TestStdinEOF(t *testing.T) {
	cases := []struct {
		profile Profile
		k       executorKind
	}{
		{ProfileFull, spdyExecV4},
		{ProfileFull, spdyExecV5},
		{ProfileFull, wsExecV5},
		{ProfileConmonRS, wsExecV5},
		{ProfileCRIStreaming, spdyExecV4},
		{ProfileLegacy, spdyExecV2},
	}
	for _, c := range cases {
		t.Run(string(c.profile)+"/"+c.k.name, func(t *testing.T) {
			srv, _ := startServer(t, Config{Profile: c.profile})
			r := runExec(t, srv, c.k, &runtimeapi.ExecRequest{Cmd: []string{"wc"}, Stdin: true, Stdout: true}, remotecommand.StreamOptions{Stdin: strings.NewReader("a\nb\n")})
			if r.err != nil || r.stdout != "4\n" {
				t.Fatalf("wc: %+v", r)
			}
		})
	}
}

type fixedSize struct{ sent bool }

func (f *fixedSize) Next() *remotecommand.TerminalSize {
	if f.sent {
		return nil
	}
	f.sent = true
	return &remotecommand.TerminalSize{Width: 132, Height: 43}
}

// TestResize: the first terminal size reaches the backend on every
// protocol with a resize stream.
func TestResize(t *testing.T) {
	cases := []struct {
		profile Profile
		k       executorKind
	}{
		{ProfileFull, spdyExecV4},
		{ProfileFull, spdyExecV5},
		{ProfileFull, wsExecV4},
		{ProfileFull, wsExecV5},
		{ProfileCRIStreaming, spdyExecV4},
		{ProfileConmonRS, wsExecV5},
	}
	for _, c := range cases {
		t.Run(string(c.profile)+"/"+c.k.name, func(t *testing.T) {
			srv, _ := startServer(t, Config{Profile: c.profile})
			r := runExec(t, srv, c.k, &runtimeapi.ExecRequest{Cmd: []string{"size"}, Tty: true, Stdout: true}, remotecommand.StreamOptions{Tty: true, TerminalSizeQueue: &fixedSize{}})
			if r.err != nil || r.stdout != "132x43\n" {
				t.Fatalf("size: %+v", r)
			}
		})
	}
}

// TestAttach: attach carries stdin to the backend and its output back.
func TestAttach(t *testing.T) {
	for _, c := range []struct {
		profile Profile
		k       executorKind
	}{{ProfileFull, spdyExecV5}, {ProfileFull, wsExecV5}, {ProfileCRIStreaming, spdyExecV4}, {ProfileConmonRS, wsExecV5}} {
		t.Run(string(c.profile)+"/"+c.k.name, func(t *testing.T) {
			srv, _ := startServer(t, Config{Profile: c.profile})
			u := attachURL(t, srv, &runtimeapi.AttachRequest{ContainerId: "box", Stdin: true, Stdout: true})
			var out bytes.Buffer
			err := c.k.executor(t, nil, u).StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdin: strings.NewReader("typed\n"), Stdout: &out})
			if err != nil || out.String() != "attached to box\ntyped\n" {
				t.Fatalf("attach: %q, %v", out.String(), err)
			}
		})
	}
}

// ---- port-forward through client-go ----

type forwarder struct {
	local  int
	cancel func()
	errOut *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func clientForward(t testing.TB, srv Server, tunnel bool, remote int32) *forwarder {
	t.Helper()
	return clientForwardWith(t, &rest.Config{}, srv, tunnel, remote)
}

func clientForwardWith(t testing.TB, cfg *rest.Config, srv Server, tunnel bool, remote int32) *forwarder {
	t.Helper()
	u := portForwardURL(t, srv, &runtimeapi.PortForwardRequest{})
	var pf *clientportforward.PortForwarder
	ready := make(chan struct{})
	stop := make(chan struct{})
	errOut := &syncBuffer{}
	var err error
	if tunnel {
		d, derr := clientportforward.NewSPDYOverWebsocketDialer(u, cfg)
		if derr != nil {
			t.Fatal(derr)
		}
		pf, err = clientportforward.NewOnAddresses(d, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", remote)}, stop, ready, io.Discard, errOut)
	} else {
		transport, upgrader, rerr := clientspdy.RoundTripperFor(cfg)
		if rerr != nil {
			t.Fatal(rerr)
		}
		d := clientspdy.NewDialer(upgrader, &http.Client{Transport: transport}, "POST", u)
		pf, err = clientportforward.NewOnAddresses(d, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", remote)}, stop, ready, io.Discard, errOut)
	}
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- pf.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("port-forward ended before ready: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("port-forward never ready")
	}
	ports, err := pf.GetPorts()
	if err != nil {
		t.Fatal(err)
	}
	f := &forwarder{local: int(ports[0].Local), errOut: errOut}
	var once sync.Once
	f.cancel = func() {
		once.Do(func() {
			close(stop)
			<-done //nolint:errcheck // ForwardPorts ends with an error once stopped: not under test
		})
	}
	t.Cleanup(f.cancel)
	return f
}

// roundTrip sends payload on a new local connection and reads the echo
// after half-closing.
func roundTrip(t testing.TB, local int, payload []byte) ([]byte, error) {
	t.Helper()
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", local))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	werr := make(chan error, 1)
	go func() {
		_, err := c.Write(payload)
		_ = c.(*net.TCPConn).CloseWrite()
		werr <- err
	}()
	got, err := io.ReadAll(c)
	<-werr //nolint:errcheck // a write cut by the peer shows in the read result
	return got, err
}

// TestPortForwardClientGo: client-go's SPDY forwarder and its
// SPDY-over-WebSocket tunnel forwarder, several connections each.
func TestPortForwardClientGo(t *testing.T) {
	remote := echoListener(t)
	payload := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	for _, c := range []struct {
		profile Profile
		tunnel  bool
	}{{ProfileFull, false}, {ProfileFull, true}, {ProfileCRIStreaming, false}, {ProfileConmonRS, true}, {ProfileLegacy, false}} {
		name := string(c.profile) + "/spdy"
		if c.tunnel {
			name = string(c.profile) + "/tunnel"
		}
		t.Run(name, func(t *testing.T) {
			srv, _ := startServer(t, Config{Profile: c.profile})
			f := clientForward(t, srv, c.tunnel, remote)
			for i := 0; i < 3; i++ {
				got, err := roundTrip(t, f.local, payload)
				if err != nil || !bytes.Equal(got, payload) {
					t.Fatalf("connection %d: %d bytes back of %d, err %v; forwarder said %q", i, len(got), len(payload), err, f.errOut.String())
				}
			}
		})
	}
}

// TestPortForwardDirectWebSocketMultiPort: the direct protocol with two
// ports on one WebSocket, ports from ?port=, on full (binary and base64).
func TestPortForwardDirectWebSocketMultiPort(t *testing.T) {
	p1, p2 := echoListener(t), echoListener(t)
	srv, b := startServer(t, Config{Profile: ProfileFull})
	for _, proto := range []string{"v4.channel.k8s.io", "v4.base64.channel.k8s.io"} {
		b64 := strings.Contains(proto, "base64")
		u := portForwardURL(t, srv, &runtimeapi.PortForwardRequest{})
		u.RawQuery = fmt.Sprintf("port=%d&port=%d", p1, p2)
		res, ws := wsUpgrade(t, u, proto)
		mustEqual(t, "status", res.status, http.StatusSwitchingProtocols)
		_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
		// Four channels announce their port first: 0,1 -> p1; 2,3 -> p2.
		for i := 0; i < 4; i++ {
			_, msg, err := ws.ReadMessage()
			if err != nil {
				t.Fatal(err)
			}
			ch, data := decodeFrame(t, msg, b64)
			want := p1
			if ch >= 2 {
				want = p2
			}
			if len(data) != 2 || int32(data[0])|int32(data[1])<<8 != want {
				t.Fatalf("channel %d prefix %v, want port %d", ch, data, want)
			}
		}
		for ch, text := range map[byte]string{0: "to p1", 2: "to p2"} {
			typ, frame := encodeFrame(ch, []byte(text), b64)
			if err := ws.WriteMessage(typ, frame); err != nil {
				t.Fatal(err)
			}
		}
		got := map[byte]string{}
		for len(got[0]) < 5 || len(got[2]) < 5 {
			_, msg, err := ws.ReadMessage()
			if err != nil {
				t.Fatalf("after %v: %v", got, err)
			}
			ch, data := decodeFrame(t, msg, b64)
			got[ch] += string(data)
		}
		_ = ws.Close()
		if got[0] != "to p1" || got[2] != "to p2" {
			t.Fatalf("%s: echoes %q", proto, got)
		}
	}
	if len(b.Forwards()) != 4 {
		t.Fatalf("backend forwards %v, want two per WebSocket", b.Forwards())
	}
}

// TestPortForwardDirectPortsFromRequest: without ?port=, the direct
// protocol forwards the PortForwardRequest's ports (cri-streaming's rule).
func TestPortForwardDirectPortsFromRequest(t *testing.T) {
	remote := echoListener(t)
	for _, p := range []Profile{ProfileFull, ProfileCRIStreaming} {
		srv, _ := startServer(t, Config{Profile: p})
		u := portForwardURL(t, srv, &runtimeapi.PortForwardRequest{Port: []int32{remote}})
		res, ws := wsUpgrade(t, u, "v4.channel.k8s.io")
		mustEqual(t, "status", res.status, http.StatusSwitchingProtocols)
		mustEqual(t, "echo", wsDirectForward(t, ws, remote, "hello", false), "hello")
	}
}

// TestTokens: unknown and reused tokens get 404; a token for one endpoint
// is no good on another.
func TestTokens(t *testing.T) {
	srv, _ := startServer(t, Config{})
	base := fmt.Sprintf("http://%s", srv.Addr())
	get := func(path string) int {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	mustEqual(t, "unknown token", get("/exec/nope"), http.StatusNotFound)
	mustEqual(t, "no token", get("/exec/"), http.StatusNotFound)
	mustEqual(t, "other path", get("/"), http.StatusNotFound)

	u := execURL(t, srv, &runtimeapi.ExecRequest{Cmd: []string{"echo"}, Stdout: true})
	// A plain GET (no upgrade) consumes the token too.
	mustEqual(t, "plain GET", get(u.Path) == http.StatusNotFound, false)
	mustEqual(t, "reused token", get(u.Path), http.StatusNotFound)

	u = execURL(t, srv, &runtimeapi.ExecRequest{Cmd: []string{"echo"}, Stdout: true})
	mustEqual(t, "exec token on attach", get(strings.Replace(u.Path, "/exec/", "/attach/", 1)), http.StatusNotFound)
	mustEqual(t, "after its misuse", get(u.Path), http.StatusNotFound)

	r := runExec(t, srv, spdyExecV4, &runtimeapi.ExecRequest{Cmd: []string{"echo", "ok"}, Stdout: true}, remotecommand.StreamOptions{})
	if r.err != nil || r.stdout != "ok\n" {
		t.Fatalf("fresh token: %+v", r)
	}
}

// TestRequestValidation: bad requests fail at the RPC, as on cri-streaming.
func TestRequestValidation(t *testing.T) {
	srv, _ := startServer(t, Config{})
	if _, err := srv.GetExec(&runtimeapi.ExecRequest{Cmd: []string{"x"}, Stdout: true}); err == nil {
		t.Error("exec without container accepted")
	}
	if _, err := srv.GetExec(&runtimeapi.ExecRequest{ContainerId: "c", Cmd: []string{"x"}}); err == nil {
		t.Error("exec without streams accepted")
	}
	if _, err := srv.GetAttach(&runtimeapi.AttachRequest{ContainerId: "c", Tty: true, Stderr: true, Stdout: true}); err == nil {
		t.Error("attach with tty and stderr accepted")
	}
	if _, err := srv.GetPortForward(&runtimeapi.PortForwardRequest{}); err == nil {
		t.Error("port-forward without pod accepted")
	}
}

// TestNoSubprotocol: a WebSocket client that offers no subprotocol is
// served as channel.k8s.io where cri-streaming serves it (full,
// cri-streaming) and refused elsewhere; a SPDY client that offers none
// gets cri-streaming's 400 (or 403 where the profile has no SPDY).
func TestNoSubprotocol(t *testing.T) {
	for _, c := range []struct {
		profile    Profile
		wsStatus   int
		spdyStatus int
	}{
		{ProfileFull, http.StatusSwitchingProtocols, http.StatusBadRequest},
		{ProfileCRIStreaming, http.StatusSwitchingProtocols, http.StatusBadRequest},
		{ProfileConmonRS, http.StatusForbidden, http.StatusForbidden},
		{ProfileLegacy, http.StatusForbidden, http.StatusBadRequest},
	} {
		srv, _ := startServer(t, Config{Profile: c.profile})
		u := newURL(t, srv, kindExec, 0)
		res, ws := wsUpgrade(t, u)
		mustEqual(t, string(c.profile)+" websocket status", res.status, c.wsStatus)
		if ws != nil {
			got := wsFrames(t, ws, false)
			_ = ws.Close()
			mustEqual(t, "stdout", got[1], "hello\n")
		}
		res, conn := spdyUpgrade(t, newURL(t, srv, kindExec, 0))
		if conn != nil {
			_ = conn.Close()
		}
		mustEqual(t, string(c.profile)+" spdy status", res.status, c.spdyStatus)
	}
}
