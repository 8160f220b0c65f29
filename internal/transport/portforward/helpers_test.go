package portforward

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"

	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/testsupport/toyshell"
)

// The app protocol the test servers speak on the "pod's" port:
//
//	client: seed (8 bytes LE), length (8 bytes LE), then length bytes
//	server: length bytes of pseudo-random data from seed (while reading),
//	        then sha256 of what it read, then it closes.
//
// It needs no half-close, so it runs on every transport.
const pfAppHeader = 16

// pfApp is a TCP server on 127.0.0.1 standing in for a pod's port.
type pfApp struct {
	l    net.Listener
	port uint16
	wg   sync.WaitGroup
}

// startPFApp serves handler on a loopback port until the test ends.
func startPFApp(t testing.TB, handler func(net.Conn)) *pfApp {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := &pfApp{l: l, port: uint16(l.Addr().(*net.TCPAddr).Port)}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			a.wg.Add(1)
			go func() {
				defer a.wg.Done()
				defer func() { _ = c.Close() }()
				handler(c)
			}()
		}
	}()
	t.Cleanup(func() { _ = l.Close(); a.wg.Wait() })
	return a
}

// pfPattern is the pseudo-random stream for a seed.
func pfPattern(seed uint64) io.Reader {
	return &pfPatternReader{r: rand.NewChaCha8(seedBytes(seed))}
}

func seedBytes(seed uint64) [32]byte {
	var b [32]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	return b
}

type pfPatternReader struct{ r *rand.ChaCha8 }

func (p *pfPatternReader) Read(b []byte) (int, error) { return p.r.Read(b) }

// hashApp is the handler of the app protocol above.
func hashApp(c net.Conn) {
	var hdr [pfAppHeader]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return
	}
	seed := binary.LittleEndian.Uint64(hdr[:8])
	n := int64(binary.LittleEndian.Uint64(hdr[8:]))
	sent := make(chan error, 1)
	go func() {
		_, err := io.CopyN(c, pfPattern(seed), n)
		sent <- err
	}()
	h := sha256.New()
	_, rerr := io.CopyN(h, c, n)
	if err := <-sent; err != nil || rerr != nil {
		return
	}
	_, _ = c.Write(h.Sum(nil))
}

// halfCloseApp reads to EOF, then answers with the sha256 of what it read
// followed by 256 KiB of pattern, and closes.
func halfCloseApp(c net.Conn) {
	h := sha256.New()
	if _, err := io.Copy(h, c); err != nil {
		return
	}
	_, _ = c.Write(h.Sum(nil))
	_, _ = io.CopyN(c, pfPattern(7), 256<<10)
}

// roundTrip runs the app protocol over rw: it sends n bytes of pattern
// seed while reading the reply, and checks both directions' sha256.
func roundTrip(rw io.ReadWriter, seed uint64, n int64) error {
	var hdr [pfAppHeader]byte
	binary.LittleEndian.PutUint64(hdr[:8], seed)
	binary.LittleEndian.PutUint64(hdr[8:], uint64(n))
	sentHash := sha256.New()
	sent := make(chan error, 1)
	go func() {
		if _, err := rw.Write(hdr[:]); err != nil {
			sent <- err
			return
		}
		_, err := io.CopyN(io.MultiWriter(rw, sentHash), pfPattern(seed+1), n)
		sent <- err
	}()
	got := sha256.New()
	_, rerr := io.CopyN(got, rw, n)
	want := sha256.New()
	_, _ = io.CopyN(want, pfPattern(seed), n)
	var remoteHash [32]byte
	if rerr == nil {
		_, rerr = io.ReadFull(rw, remoteHash[:])
	}
	serr := <-sent
	switch {
	case serr != nil:
		return fmt.Errorf("sending: %w", serr)
	case rerr != nil:
		return fmt.Errorf("receiving: %w", rerr)
	case !bytes.Equal(got.Sum(nil), want.Sum(nil)):
		return errors.New("received bytes differ from what the app sent")
	case !bytes.Equal(remoteHash[:], sentHash.Sum(nil)):
		return errors.New("the app received bytes that differ from what was sent")
	}
	return nil
}

// startStreamServer runs the mock runtime's streaming server with a profile
// and faults, and returns it with a URL source for one pod.
func startStreamServer(t testing.TB, profile streamserver.Profile, faults ...string) (streamserver.Server, URLSource) {
	t.Helper()
	return startStreamServerTLS(t, nil, profile, faults...)
}

// startStreamServerTLS is startStreamServer speaking https/wss with tlsCfg
// (plain http when nil).
func startStreamServerTLS(t testing.TB, tlsCfg *tls.Config, profile streamserver.Profile, faults ...string) (streamserver.Server, URLSource) {
	t.Helper()
	quietKlogOnce.Do(func() {
		// The streaming server logs every refused connection through klog.
		fs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(fs)
		_ = fs.Set("logtostderr", "false")
		_ = fs.Set("alsologtostderr", "false")
		_ = fs.Set("stderrthreshold", "FATAL")
		klog.SetOutput(io.Discard)
	})
	cfg := streamserver.Config{Addr: "127.0.0.1:0", Profile: profile, TLS: tlsCfg}
	for _, f := range faults {
		fault, err := streamserver.ParseFault(f)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Faults = append(cfg.Faults, fault)
	}
	srv, err := streamserver.New(cfg, &toyshell.Shell{})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	src := func(ctx context.Context, ports []uint16) (string, error) {
		req := &runtimeapi.PortForwardRequest{PodSandboxId: "pod"}
		for _, p := range ports {
			req.Port = append(req.Port, int32(p))
		}
		resp, err := srv.GetPortForward(req)
		if err != nil {
			return "", err
		}
		return resp.Url, nil
	}
	return srv, src
}

var quietKlogOnce sync.Once

// lockedBuffer collects reports from many goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Printf(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	fmt.Fprintf(&b.b, format+"\n", args...)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
