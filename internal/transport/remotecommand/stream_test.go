package remotecommand

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/wsstream"

	"github.com/crisp-cri/crisp/internal/testsupport/toyshell"
	"github.com/crisp-cri/crisp/internal/transport"
)

// fakeServer is a streaming server in the style of containerd's: single-use
// tokens (any request consumes one, even a refused upgrade), a chosen set of
// SPDY and WebSocket protocols, and cri-streaming's own handlers behind them,
// running commands in toyshell (the one fake streaming backend of crisp's
// tests; its package doc lists the commands). It is a thin shim, not the
// mock's server, because these tests need what no profile of the mock
// offers: any set of protocols, the offers each request made, upgrades
// left unanswered, and httptest's TLS server.
type fakeServer struct {
	t    testing.TB
	srv  *httptest.Server
	spdy []string // SPDY protocols spoken
	ws   []string // WebSocket protocols spoken (v4.channel.k8s.io at most: cri-streaming has no v5)
	sh   *toyshell.Shell
	hang chan struct{} // non-nil: requests get no answer until it closes
	// arrived, when set, hears of each request left hanging.
	arrived chan struct{}

	mu     sync.Mutex
	tokens map[string]bool // issued, not yet used
	used   []string
	seen   []string // "WebSocket v5.channel.k8s.io" per request, in order
}

func newFakeServer(t testing.TB, spdy, ws []string) *fakeServer {
	f := &fakeServer{t: t, spdy: spdy, ws: ws, sh: &toyshell.Shell{}, tokens: map[string]bool{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// source is a URLSource issuing a fresh token per call, for cmd with the
// streams s asks for (as a CRI ExecRequest would say).
func (f *fakeServer) source(s Streams, cmd ...string) transport.URLSource {
	q := url.Values{}
	for k, on := range map[string]bool{"input": s.Stdin != nil, "output": s.Stdout != nil, "error": s.Stderr != nil && !s.TTY, "tty": s.TTY} {
		if on {
			q.Set(k, "1")
		}
	}
	return func(ctx context.Context) (string, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		tok := fmt.Sprintf("tok%d-%s", len(f.tokens)+len(f.used), strings.Join(cmd, "_"))
		f.tokens[tok] = true
		return f.srv.URL + "/exec/" + tok + "?" + q.Encode(), nil
	}
}

func (f *fakeServer) serve(w http.ResponseWriter, req *http.Request) {
	tok := strings.TrimPrefix(req.URL.Path, "/exec/")
	isWS := wsstream.IsWebSocketRequest(req)
	var offered []string
	if isWS {
		for _, h := range req.Header.Values("Sec-Websocket-Protocol") {
			for _, p := range strings.Split(h, ",") {
				offered = append(offered, strings.TrimSpace(p))
			}
		}
	} else {
		offered = req.Header.Values(headerProtocolVersion)
	}
	if f.hang != nil {
		if f.arrived != nil {
			f.arrived <- struct{}{}
		}
		select { // take the connection, never answer
		case <-f.hang:
		case <-req.Context().Done():
		}
		return
	}
	f.mu.Lock()
	valid := f.tokens[tok]
	delete(f.tokens, tok)
	f.used = append(f.used, tok)
	kind := "SPDY"
	if isWS {
		kind = "WebSocket"
	}
	f.seen = append(f.seen, kind+" "+strings.Join(offered, ","))
	f.mu.Unlock()
	if !valid {
		http.Error(w, "token not found", http.StatusNotFound)
		return
	}
	cmd := strings.Split(tok[strings.Index(tok, "-")+1:], "_")
	if isWS {
		ok := false
		for _, p := range offered {
			ok = ok || slices.Contains(f.ws, p)
		}
		if !ok {
			http.Error(w, "unsupported websocket protocols "+strings.Join(offered, ","), http.StatusForbidden)
			return
		}
	} else if len(f.spdy) == 0 {
		http.Error(w, "no SPDY here", http.StatusForbidden)
		return
	}
	opts, err := remotecommandserver.NewOptions(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	remotecommandserver.ServeExec(w, req, shellExecutor{f.sh}, "", "", "ctr", cmd, opts, time.Minute, 10*time.Second, f.spdy)
}

// stream runs Stream for cmd with a source that asks for streams.
func (f *fakeServer) stream(offers []transport.Offer, cfg transport.Config, streams Streams, cmd ...string) (Result, error) {
	return Stream(context.Background(), "exec", f.source(streams, cmd...), offers, cfg, streams)
}

// shellExecutor is cri-streaming's Executor over toyshell.
type shellExecutor struct{ *toyshell.Shell }

func (e shellExecutor) ExecInContainer(ctx context.Context, _, _, container string, cmd []string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommandserver.TerminalSize, _ time.Duration) error {
	return e.Exec(ctx, container, cmd, in, out, errOut, tty, resize)
}

var (
	criSPDY = []string{transport.ExecProtocolV4, transport.ExecProtocolV3, transport.ExecProtocolV2, transport.ExecProtocolV1}
	criWS   = []string{transport.ExecProtocolV4}
)

func TestStreamFallsBackWithFreshURLs(t *testing.T) {
	tests := []struct {
		name      string
		spdy, ws  []string
		transport transport.Transport
		wantSeen  []string
		wantProto string
		wantKind  transport.Transport
	}{
		{"cri-streaming auto", criSPDY, criWS, transport.Auto,
			[]string{"WebSocket v5.channel.k8s.io", "SPDY v5.channel.k8s.io,v4.channel.k8s.io,v3.channel.k8s.io,v2.channel.k8s.io,channel.k8s.io"},
			transport.ExecProtocolV4, transport.SPDY},
		{"websocket v4 only auto", nil, criWS, transport.Auto,
			[]string{"WebSocket v5.channel.k8s.io", "SPDY v5.channel.k8s.io,v4.channel.k8s.io,v3.channel.k8s.io,v2.channel.k8s.io,channel.k8s.io", "WebSocket v4.channel.k8s.io"},
			transport.ExecProtocolV4, transport.WebSocket},
		{"cri-streaming websocket", criSPDY, criWS, transport.WebSocket,
			[]string{"WebSocket v5.channel.k8s.io", "WebSocket v4.channel.k8s.io"},
			transport.ExecProtocolV4, transport.WebSocket},
		{"legacy spdy", []string{transport.ExecProtocolV2, transport.ExecProtocolV1}, nil, transport.SPDY,
			[]string{"SPDY v5.channel.k8s.io,v4.channel.k8s.io,v3.channel.k8s.io,v2.channel.k8s.io,channel.k8s.io"},
			transport.ExecProtocolV2, transport.SPDY},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeServer(t, tt.spdy, tt.ws)
			offers, err := transport.ExecOffers(tt.transport, "")
			if err != nil {
				t.Fatal(err)
			}
			var out, logs bytes.Buffer
			cfg := transport.Config{Logf: func(format string, args ...any) { fmt.Fprintf(&logs, format+"\n", args...) }}
			res, err := f.stream(offers, cfg, Streams{Stdout: &out}, "echo", "hi")
			if err != nil {
				t.Fatalf("Stream: %v\nlog:\n%s", err, logs.String())
			}
			if out.String() != "hi\n" {
				t.Errorf("stdout = %q, want %q", out.String(), "hi\n")
			}
			if diff := cmp.Diff(tt.wantSeen, f.seen); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if got := len(slices.Compact(slices.Clone(f.used))); got != len(f.used) {
				t.Errorf("a URL was used twice: %q", f.used)
			}
			att, ok := res.Negotiated()
			if !ok || att.Protocol != tt.wantProto || att.Transport != tt.wantKind || att.Status != http.StatusSwitchingProtocols {
				t.Errorf("negotiated %+v (ok %v), want %s %s", att, ok, tt.wantKind, tt.wantProto)
			}
			for _, a := range res.Attempts[:len(res.Attempts)-1] {
				if a.Status != http.StatusForbidden || !httpstream.IsUpgradeFailure(a.Err) || a.URL == att.URL {
					t.Errorf("refused attempt %+v: want a 403 upgrade failure on its own URL", a)
				}
			}
			// -v's breakdown: start-up, then the lookup, every refused
			// attempt, the accepted one's RPC, upgrade and session.
			timing := regexp.MustCompile(`exec: timing: start-up [0-9.]+ms, gRPC dial and lookup [0-9.]+ms; (refused [^;]+; ){` + fmt.Sprint(len(res.Attempts)-1) + `}` +
				tt.wantKind.Title() + ` RPC [0-9.]+ms, upgrade [0-9.]+ms, session and exit status [0-9.]+ms; total [0-9.]+ms`)
			if !timing.MatchString(logs.String()) {
				t.Errorf("-v log has no timing breakdown matching %s:\n%s", timing, logs.String())
			}
			if !strings.Contains(logs.String(), "negotiated "+tt.wantKind.Title()+" "+tt.wantProto) {
				t.Errorf("-v log does not name the negotiated protocol:\n%s", logs.String())
			}
			if len(res.Attempts) > 1 && !strings.Contains(logs.String(), "falling back") {
				t.Errorf("-v log does not show the fallback:\n%s", logs.String())
			}
		})
	}
}

func TestStreamAllRefused(t *testing.T) {
	f := newFakeServer(t, nil, criWS)
	offers, _ := transport.ExecOffers(transport.SPDY, "")
	res, err := f.stream(offers, transport.Config{}, Streams{Stdout: io.Discard}, "echo", "hi")
	var neg *transport.NegotiationError
	if !errors.As(err, &neg) {
		t.Fatalf("err = %v, want a NegotiationError", err)
	}
	msg := err.Error()
	for _, want := range []string{"SPDY v5..v1", f.srv.URL, "403 Forbidden", "no SPDY here", "crisp probe"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error spans lines: %q", msg)
	}
	if len(res.Attempts) != 1 || res.Attempts[0].Accepted() {
		t.Errorf("attempts = %+v", res.Attempts)
	}
}

func TestStreamUnreachableDoesNotFallBack(t *testing.T) {
	f := newFakeServer(t, criSPDY, criWS)
	f.srv.Close()
	offers, _ := transport.ExecOffers(transport.Auto, "")
	res, err := f.stream(offers, transport.Config{}, Streams{Stdout: io.Discard}, "echo")
	if err == nil || httpstream.IsUpgradeFailure(err) || !strings.Contains(err.Error(), f.srv.URL) {
		t.Fatalf("err = %v, want a connection failure naming the URL", err)
	}
	if len(res.Attempts) != 1 {
		t.Errorf("made %d attempts, want 1 (no fallback on a connection failure)", len(res.Attempts))
	}
}

func TestExitCodes(t *testing.T) {
	tests := []struct {
		transport transport.Transport
		pin       string
	}{
		{transport.SPDY, ""}, {transport.WebSocket, ""}, {transport.SPDY, "v3"}, {transport.SPDY, "v2"}, {transport.SPDY, "v1"},
	}
	for _, tt := range tests {
		t.Run(string(tt.transport)+tt.pin, func(t *testing.T) {
			f := newFakeServer(t, criSPDY, criWS)
			offers, err := transport.ExecOffers(tt.transport, tt.pin)
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.stream(offers, transport.Config{}, Streams{Stdout: io.Discard, Stderr: io.Discard}, "exit", "7")
			var coded interface{ ExitStatus() int }
			if tt.pin == "v1" && err == nil {
				// cri-streaming's v1 handler resets the error stream before
				// the command runs: no v1 client can learn the status there
				// (statuswatch_test.go covers a v1 server that sends it).
				return
			}
			if !errors.As(err, &coded) || coded.ExitStatus() != 7 {
				t.Fatalf("err = %v (%T), want exit status 7", err, err)
			}
			_, err = f.stream(offers, transport.Config{}, Streams{Stdout: io.Discard}, "exit", "0")
			if err != nil {
				t.Fatalf("exit 0: %v", err)
			}
		})
	}
}

func TestStdinAndStderr(t *testing.T) {
	for _, tr := range []transport.Transport{transport.SPDY, transport.WebSocket} {
		t.Run(string(tr), func(t *testing.T) {
			f := newFakeServer(t, criSPDY, criWS)
			offers, _ := transport.ExecOffers(tr, "")
			var out, errOut bytes.Buffer
			_, err := f.stream(offers, transport.Config{}, Streams{Stdout: &out, Stderr: &errOut}, "stderr", "on", "stderr")
			if err != nil || errOut.String() != "on stderr\n" {
				t.Fatalf("err %v, stderr %q", err, errOut.String())
			}
			if tr == transport.WebSocket {
				return // v4 cannot end stdin; cat would never finish
			}
			out.Reset()
			payload := strings.Repeat("0123456789abcdef", 64*1024)
			_, err = f.stream(offers, transport.Config{}, Streams{Stdin: strings.NewReader(payload), Stdout: &out}, "cat")
			if err != nil || out.String() != payload {
				t.Fatalf("cat: err %v, %d bytes back of %d", err, out.Len(), len(payload))
			}
		})
	}
}

// With a terminal on stdin (typed input), v4 warns when the input ends.
// The end comes with the line (iotest.DataErrReader): read apart, it could
// come after readline had exited and the session ended, when there is
// nothing left to warn about (under load: 6 runs of 1000 failed so).
func TestWebSocketV4StdinEOFWarnsOnce(t *testing.T) {
	f := newFakeServer(t, nil, criWS)
	offers, _ := transport.ExecOffers(transport.WebSocket, "")
	var out, warn bytes.Buffer
	cfg := transport.Config{Warnf: func(format string, args ...any) { fmt.Fprintf(&warn, format+"\n", args...) }}
	stdin := iotest.DataErrReader(strings.NewReader("a\n"))
	_, err := f.stream(offers, cfg, Streams{Stdin: stdin, Stdout: &out, InteractiveStdin: true}, "readline")
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != "got a line\n" {
		t.Errorf("stdout = %q", out.String())
	}
	if n := strings.Count(warn.String(), "cannot pass end-of-input"); n != 1 {
		t.Errorf("warned %d times, want once:\n%s", n, warn.String())
	}
}

func TestTrace(t *testing.T) {
	f := newFakeServer(t, criSPDY, criWS)
	offers, _ := transport.ExecOffers(transport.SPDY, "")
	var out, trace bytes.Buffer
	_, err := f.stream(offers, transport.Config{Trace: &trace}, Streams{Stdin: strings.NewReader("hello"), Stdout: &out}, "cat")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"frame -> ch0 stdin  5 B +", "frame <- ch1 stdout 5 B +", "end of input", "exit status 0"} {
		if !strings.Contains(trace.String(), want) {
			t.Errorf("trace lacks %q:\n%s", want, trace.String())
		}
	}
}

func TestTryReportsRefusal(t *testing.T) {
	f := newFakeServer(t, criSPDY, criWS)
	u, _ := f.source(Streams{Stdout: io.Discard}, "echo", "x")(context.Background())
	att, err := Try(context.Background(), "exec", u, transport.Offer{Transport: transport.WebSocket, Protocols: []string{transport.ExecProtocolV5}}, transport.Config{}, Streams{Stdout: io.Discard})
	var refused *transport.RefusedError
	if !errors.As(err, &refused) || att.Status != http.StatusForbidden || att.Accepted() || !strings.Contains(att.Reason, "unsupported websocket protocols") {
		t.Fatalf("att %+v err %v", att, err)
	}
	u, _ = f.source(Streams{Stdout: io.Discard}, "echo", "x")(context.Background())
	var out bytes.Buffer
	att, err = Try(context.Background(), "exec", u, transport.Offer{Transport: transport.SPDY, Protocols: []string{transport.ExecProtocolV3}}, transport.Config{}, Streams{Stdout: &out})
	if err != nil || !att.Accepted() || att.Protocol != transport.ExecProtocolV3 || att.Upgrade <= 0 || out.String() != "x\n" {
		t.Fatalf("att %+v err %v out %q", att, err, out.String())
	}
}

func TestUpgradeTimeout(t *testing.T) {
	for _, tr := range []transport.Transport{transport.SPDY, transport.WebSocket} {
		t.Run(string(tr), func(t *testing.T) {
			f := newFakeServer(t, criSPDY, criWS)
			f.hang = make(chan struct{})
			t.Cleanup(func() { close(f.hang) })
			offers, _ := transport.ExecOffers(tr, "")
			res, err := f.stream(offers, transport.Config{UpgradeTimeout: 50 * time.Millisecond}, Streams{Stdout: io.Discard}, "echo")
			if err == nil || !strings.Contains(err.Error(), "did not answer") || httpstream.IsUpgradeFailure(err) {
				t.Fatalf("err = %v, want an upgrade timeout (no fallback)", err)
			}
			if len(res.Attempts) != 1 {
				t.Errorf("%d attempts, want 1", len(res.Attempts))
			}
		})
	}
}

// With a protocol cache to consult, the first URL call does not wait for
// the cache's Version call: the runtime gets both at once.
func TestFirstURLCallBesideVersion(t *testing.T) {
	f := newFakeServer(t, criSPDY, criWS)
	var out bytes.Buffer
	streams := Streams{Stdout: &out}
	urlCalled := make(chan struct{})
	var once sync.Once
	inner := f.source(streams, "echo", "hi")
	src := func(ctx context.Context) (string, error) {
		once.Do(func() { close(urlCalled) })
		return inner(ctx)
	}
	identifyErr := make(chan error, 1)
	cfg := transport.Config{Protocols: &transport.ProtocolCache{
		Path: filepath.Join(t.TempDir(), "protocols.json"), Endpoint: "unix:///r.sock",
		Identify: func(context.Context) (string, error) {
			select {
			case <-urlCalled:
				identifyErr <- nil
				return "rt 1.0", nil
			case <-time.After(10 * time.Second):
				err := errors.New("the first URL call waited for the Version call")
				identifyErr <- err
				return "", err
			}
		},
	}}
	offers := []transport.Offer{{Transport: transport.WebSocket, Protocols: criWS}, {Transport: transport.SPDY, Protocols: criSPDY}}
	if _, err := Stream(context.Background(), "exec", src, offers, cfg, streams); err != nil {
		t.Fatal(err)
	}
	if err := <-identifyErr; err != nil {
		t.Error(err)
	}
	if out.String() != "hi\n" {
		t.Errorf("stdout %q, want %q", out.String(), "hi\n")
	}
}

// cfg.Upgraded hears of an accepted upgrade, once; a refused one says
// nothing (attach --reconnect says "re-attached" only then).
func TestUpgradedHeardOnAcceptanceOnly(t *testing.T) {
	f := newFakeServer(t, criSPDY, criWS)
	var heard int
	cfg := transport.Config{Upgraded: func() { heard++ }}
	u, _ := f.source(Streams{Stdout: io.Discard}, "echo", "x")(context.Background())
	if _, err := Try(context.Background(), "exec", u, transport.Offer{Transport: transport.WebSocket, Protocols: []string{transport.ExecProtocolV5}}, cfg, Streams{Stdout: io.Discard}); err == nil || heard != 0 {
		t.Fatalf("a refused upgrade: err %v, heard %d times", err, heard)
	}
	offers, _ := transport.ExecOffers(transport.WebSocket, "")
	if _, err := f.stream(offers, cfg, Streams{Stdout: io.Discard}, "echo", "x"); err != nil || heard != 1 {
		t.Fatalf("an accepted upgrade: err %v, heard %d times, want once", err, heard)
	}
}
