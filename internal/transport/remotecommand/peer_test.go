package remotecommand

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/transport/liveness"
)

// peerTransports are the two families a dead peer must be noticed on:
// SPDY (client-go's executor on crisp's spdyconn) and WebSocket v5.
var peerTransports = []transport.Transport{transport.SPDY, transport.WebSocket}

// signalWriter collects what it is written and closes seen once want is in
// it.
type signalWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func newSignalWriter(want string) *signalWriter {
	return &signalWriter{want: want, seen: make(chan struct{})}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// A runtime that vanishes mid-session (the proxy swallows every byte both
// ways and closes nothing) or freezes (the proxy stops reading and
// sending) ends the session with a DeadPeerError saying what was seen
// last, not a remote exit status (so exec and attach exit 125). Before
// liveness, SPDY hung here until the test's deadline (and WebSocket until
// TCP keepalive, ~150 s; frozen, both for good).
func TestDeadPeerEndsTheSession(t *testing.T) {
	for _, mode := range []struct {
		name string
		mode testkit.ProxyMode
	}{{"vanished", testkit.ProxySwallow}, {"frozen", testkit.ProxyFreeze}} {
		for _, tr := range peerTransports {
			t.Run(mode.name+"/"+string(tr), func(t *testing.T) {
				proxy, source := peerServer(t)
				offers, err := transport.ExecOffers(tr, "")
				if err != nil {
					t.Fatal(err)
				}
				out := newSignalWriter("ready\n")
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				go func() {
					<-out.seen
					proxy.Set(mode.mode)
				}()
				cfg := transport.Config{PeerTimeout: time.Second, UpgradeTimeout: 10 * time.Second}
				_, err = Stream(ctx, "exec", source("sh", "-c", "echo ready; sleep"), offers, cfg, Streams{Stdout: out})
				if ctx.Err() != nil {
					t.Fatalf("the session hung until the test's deadline (err %v)", err)
				}
				var dead *liveness.DeadPeerError
				if !errors.As(err, &dead) {
					t.Fatalf("err = %v, want a DeadPeerError", err)
				}
				var coded transport.RemoteExit
				if errors.As(err, &coded) {
					t.Errorf("err %v carries a remote exit status %d; want crisp's own failure (125)", err, coded.ExitStatus())
				}
				for _, want := range []string{"exec: the session over " + tr.Title(), "last byte received", "unanswered", "--peer-timeout"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("%q lacks %q", err, want)
					}
				}
				if out.String() != "ready\n" {
					t.Errorf("stdout %q, want what came before the peer died", out.String())
				}
			})
		}
	}
}

// A live command that is silent for many bounds is not ended on either
// transport: the peer answers the pings.
func TestQuietLiveCommandIsNotEnded(t *testing.T) {
	for _, tr := range peerTransports {
		t.Run(string(tr), func(t *testing.T) {
			_, source := peerServer(t)
			offers, err := transport.ExecOffers(tr, "")
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			cfg := transport.Config{PeerTimeout: 300 * time.Millisecond, UpgradeTimeout: 10 * time.Second}
			if _, err := Stream(context.Background(), "exec", source("sh", "-c", "echo begin; sleep 2; echo end"), offers, cfg, Streams{Stdout: &out}); err != nil {
				t.Fatalf("a command silent for 2s with a 300ms bound: %v", err)
			}
			if out.String() != "begin\nend\n" {
				t.Errorf("stdout %q, want begin and end", out.String())
			}
		})
	}
}

// pausingWriter stops for pause at its first write (`| less` held), then
// takes everything.
type pausingWriter struct {
	pause  time.Duration
	paused bool
	n      int
	bad    bool
}

func (w *pausingWriter) Write(p []byte) (int, error) {
	if !w.paused {
		w.paused = true
		time.Sleep(w.pause)
	}
	for i, b := range p {
		if b != 'a'+byte((w.n+i)%26) {
			w.bad = true
		}
	}
	w.n += len(p)
	return len(p), nil
}

// A local reader that pauses for many bounds loses nothing and is not
// ended: while crisp does not read, the peer is asked nothing.
func TestPausedReaderIsNotEnded(t *testing.T) {
	const size = 12 << 20 // past spdyconn's 8 MiB backlog: TCP stops too
	for _, tr := range peerTransports {
		t.Run(string(tr), func(t *testing.T) {
			_, source := peerServer(t)
			offers, err := transport.ExecOffers(tr, "")
			if err != nil {
				t.Fatal(err)
			}
			w := &pausingWriter{pause: 2 * time.Second}
			cfg := transport.Config{PeerTimeout: 300 * time.Millisecond, UpgradeTimeout: 10 * time.Second}
			if _, err := Stream(context.Background(), "exec", source("abc", "12582912"), offers, cfg, Streams{Stdout: w}); err != nil {
				t.Fatalf("a reader paused for 2s with a 300ms bound: %v", err)
			}
			if w.n != size || w.bad {
				t.Errorf("got %d bytes (corrupt: %v), want %d intact", w.n, w.bad, size)
			}
		})
	}
}
