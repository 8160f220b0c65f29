package mockruntime_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/client-go/rest"                //nolint:depguard // test-only: the client crictl and critest use, as an independent check of the mock
	"k8s.io/client-go/tools/portforward"   //nolint:depguard // test-only: the client crictl and critest use, as an independent check of the mock
	"k8s.io/client-go/tools/remotecommand" //nolint:depguard // test-only: the client crictl and critest use, as an independent check of the mock
	"k8s.io/client-go/transport/spdy"      //nolint:depguard // test-only: the client crictl and critest use, as an independent check of the mock
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	utilexec "k8s.io/utils/exec"

	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
)

// syncBuffer is a bytes.Buffer safe for a writer and a poller.
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

func spdyExecutor(t *testing.T, rawURL string) remotecommand.Executor {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	e, err := remotecommand.NewSPDYExecutor(&rest.Config{}, http.MethodPost, u)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func execURL(t *testing.T, env *mocktest.Env, req *runtimeapi.ExecRequest) string {
	t.Helper()
	resp, err := env.CRI.Exec(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Url
}

func TestStreamingExec(t *testing.T) {
	env := start(t)
	podID := env.RunPod(t, "p")
	id := env.RunContainer(t, podID, mocktest.ContainerSpec{Command: []string{"sleep", "1000"}})
	ctx := ctxT(t)

	t.Run("output and exit code", func(t *testing.T) {
		u := execURL(t, env, &runtimeapi.ExecRequest{ContainerId: id, Cmd: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}, Stdout: true, Stderr: true})
		var out, errOut bytes.Buffer
		err := spdyExecutor(t, u).StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut})
		var exitErr utilexec.ExitError
		if !errors.As(err, &exitErr) || exitErr.ExitStatus() != 3 {
			t.Errorf("exec error = %v, want exit code 3", err)
		}
		if out.String() != "out\n" || errOut.String() != "err\n" {
			t.Errorf("stdout %q stderr %q, want %q %q", out.String(), errOut.String(), "out\n", "err\n")
		}
	})
	t.Run("stdin to EOF", func(t *testing.T) {
		u := execURL(t, env, &runtimeapi.ExecRequest{ContainerId: id, Cmd: []string{"wc", "-l"}, Stdin: true, Stdout: true, Stderr: true})
		var out bytes.Buffer
		err := spdyExecutor(t, u).StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: strings.NewReader("a\nb\nc\n"), Stdout: &out, Stderr: io.Discard})
		if err != nil || strings.TrimSpace(out.String()) != "3" {
			t.Errorf("wc -l of 3 lines = %q, %v; want 3", out.String(), err)
		}
	})
	t.Run("tty with size", func(t *testing.T) {
		u := execURL(t, env, &runtimeapi.ExecRequest{ContainerId: id, Cmd: []string{"sh", "-c", "sleep 0.5; stty size"}, Stdin: true, Stdout: true, Tty: true})
		var out bytes.Buffer
		inR, inW := io.Pipe()
		defer func() { _ = inW.Close() }()
		sizes := &fixedSize{size: remotecommand.TerminalSize{Width: 101, Height: 33}}
		err := spdyExecutor(t, u).StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: inR, Stdout: &out, Tty: true, TerminalSizeQueue: sizes})
		if err != nil || strings.TrimSpace(out.String()) != "33 101" {
			t.Errorf("stty size = %q, %v; want 33 101", out.String(), err)
		}
	})
}

// fixedSize hands out one terminal size, then nil (no more sizes).
type fixedSize struct {
	once sync.Once
	size remotecommand.TerminalSize
}

func (f *fixedSize) Next() *remotecommand.TerminalSize {
	first := false
	f.once.Do(func() { first = true })
	if first {
		return &f.size
	}
	return nil
}

func TestStreamingAttach(t *testing.T) {
	env := start(t)
	podID := env.RunPod(t, "p")
	id := env.RunContainer(t, podID, mocktest.ContainerSpec{Command: []string{"sh"}, Stdin: true, StdinOnce: true})
	ctx := ctxT(t)
	resp, err := env.CRI.Attach(ctx, &runtimeapi.AttachRequest{ContainerId: id, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- spdyExecutor(t, resp.Url).StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: inR, Stdout: out, Stderr: io.Discard})
	}()
	if _, err := io.WriteString(inW, "echo -n hello\n"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return out.String() == "hello" }, "attach output hello, have %q", out)
	// stdin_once: the end of input ends the shell, and the attach with it.
	_ = inW.Close()
	if err := <-done; err != nil {
		t.Errorf("attach: %v", err)
	}
	waitState(t, env, id, runtimeapi.ContainerState_CONTAINER_EXITED)
}

func waitFor(t *testing.T, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for "+format, args...)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStreamingPortForwardHalfClose(t *testing.T) {
	env := start(t)
	podID := env.RunPod(t, "p")
	ctx := ctxT(t)

	// The "pod's" server: reads to EOF (the client's half-close), answers
	// with the byte count, then closes.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var srvWG sync.WaitGroup
	defer func() {
		_ = lis.Close()
		srvWG.Wait()
	}()
	srvWG.Add(1)
	go func() {
		defer srvWG.Done()
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			n, _ := io.Copy(io.Discard, c)
			_, _ = fmt.Fprintf(c, "got %d bytes", n)
			_ = c.Close()
		}
	}()
	remotePort := lis.Addr().(*net.TCPAddr).Port

	resp, err := env.CRI.PortForward(ctx, &runtimeapi.PortForwardRequest{PodSandboxId: podID})
	if err != nil {
		t.Fatal(err)
	}
	local, stop := spdyForward(t, resp.Url, remotePort)
	defer stop()
	c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", local))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if _, err := c.Write(bytes.Repeat([]byte("x"), 100000)); err != nil {
		t.Fatal(err)
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "got 100000 bytes" {
		t.Errorf("answer through port-forward = %q, %v; want %q", got, err, "got 100000 bytes")
	}
}

// spdyForward forwards a free loopback port to remotePort through
// client-go's SPDY port-forwarder on the URL a PortForward call returned.
// It returns the local port, and stop, which ends the forwarder and waits
// for it.
func spdyForward(tb testing.TB, rawURL string, remotePort int) (local uint16, stop func()) {
	tb.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		tb.Fatal(err)
	}
	tr, upgrader, err := spdy.RoundTripperFor(&rest.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: tr}, http.MethodPost, u)
	stopCh, ready := make(chan struct{}), make(chan struct{})
	pf, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", remotePort)}, stopCh, ready, io.Discard, io.Discard)
	if err != nil {
		tb.Fatal(err)
	}
	pfDone := make(chan error, 1)
	go func() { pfDone <- pf.ForwardPorts() }()
	stop = func() {
		close(stopCh)
		<-pfDone //nolint:errcheck // ForwardPorts ends with an error once stopped: not under test
	}
	<-ready
	ports, err := pf.GetPorts()
	if err != nil {
		stop()
		tb.Fatal(err)
	}
	return ports[0].Local, stop
}

func TestStreamingAttachTTY(t *testing.T) {
	env := start(t)
	podID := env.RunPod(t, "p")
	id := env.RunContainer(t, podID, mocktest.ContainerSpec{Command: []string{"sh"}, TTY: true, Stdin: true})
	ctx := ctxT(t)
	resp, err := env.CRI.Attach(ctx, &runtimeapi.AttachRequest{ContainerId: id, Stdin: true, Stdout: true, Tty: true})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	out := &syncBuffer{}
	done := make(chan error, 1)
	sizes := &fixedSize{size: remotecommand.TerminalSize{Width: 91, Height: 17}}
	go func() {
		done <- spdyExecutor(t, resp.Url).StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: inR, Stdout: out, Tty: true, TerminalSizeQueue: sizes})
	}()
	// The size arrives with the stream; ask until the shell sees it.
	waitFor(t, func() bool {
		if _, err := io.WriteString(inW, "stty size\n"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		return strings.Contains(out.String(), "17 91")
	}, "stty size 17 91 through the attached terminal, have %q", out)
	// The end of a TTY client's input detaches it; the container runs on.
	_ = inW.Close()
	if err := <-done; err != nil {
		t.Errorf("attach: %v", err)
	}
	waitState(t, env, id, runtimeapi.ContainerState_CONTAINER_RUNNING)
}

// selfSignedTLS makes a server configuration for 127.0.0.1.
func selfSignedTLS(t *testing.T) *tls.Config {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "crisp-mock test"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
}

func TestStreamingOverTLS(t *testing.T) {
	noChildren(t)
	env := mocktest.Start(t, mockruntime.Config{StreamTLS: selfSignedTLS(t)})
	podID := env.RunPod(t, "p")
	id := env.RunContainer(t, podID, mocktest.ContainerSpec{Command: []string{"sleep", "1000"}})
	u := execURL(t, env, &runtimeapi.ExecRequest{ContainerId: id, Cmd: []string{"echo", "secure"}, Stdout: true})
	if !strings.HasPrefix(u, "https://127.0.0.1:") {
		t.Fatalf("exec URL %q is not https on loopback", u)
	}
	parsed, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	e, err := remotecommand.NewSPDYExecutor(&rest.Config{TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, http.MethodPost, parsed)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := e.StreamWithContext(ctxT(t), remotecommand.StreamOptions{Stdout: &out}); err != nil || out.String() != "secure\n" {
		t.Errorf("exec over TLS = %q, %v; want secure", out.String(), err)
	}
}

// Without stdin_once the container's stdin outlives an attached client's
// end of input: a second client still reaches the same process.
func TestStreamingAttachStdinStaysOpen(t *testing.T) {
	env := start(t)
	podID := env.RunPod(t, "p")
	id := env.RunContainer(t, podID, mocktest.ContainerSpec{Command: []string{"sh"}, Stdin: true})
	ctx := ctxT(t)
	attach := func(input string, want string) {
		t.Helper()
		resp, err := env.CRI.Attach(ctx, &runtimeapi.AttachRequest{ContainerId: id, Stdin: true, Stdout: true, Stderr: true})
		if err != nil {
			t.Fatal(err)
		}
		inR, inW := io.Pipe()
		out := &syncBuffer{}
		actx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- spdyExecutor(t, resp.Url).StreamWithContext(actx, remotecommand.StreamOptions{Stdin: inR, Stdout: out, Stderr: io.Discard})
		}()
		if _, err := io.WriteString(inW, input); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool { return out.String() == want }, "attach output %q", want)
		_ = inW.Close()
		// The session goes on after the end of input: the client leaves.
		cancel()
		<-done //nolint:errcheck // the client left: its session error is expected, not under test
	}
	attach("echo one\n", "one\n")
	attach("echo two\n", "two\n")
	waitState(t, env, id, runtimeapi.ContainerState_CONTAINER_RUNNING)
}

// A container that ignores SIGTERM is killed when the stop timeout ends.
func TestStopEscalatesToSIGKILL(t *testing.T) {
	env := start(t)
	podID := env.RunPod(t, "p")
	mark := filepath.Join(t.TempDir(), "trapped")
	id := env.RunContainer(t, podID, mocktest.ContainerSpec{
		Command: []string{"sh", "-c", `trap "" TERM; touch "$MARK"; while :; do sleep 1; done`},
		Env:     map[string]string{"MARK": mark},
	})
	waitFile(t, mark)
	if _, err := env.CRI.StopContainer(ctxT(t), &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 1}); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, env, id, runtimeapi.ContainerState_CONTAINER_EXITED)
	if st.ExitCode != 137 {
		t.Errorf("exit code = %d, want 137 (SIGKILL)", st.ExitCode)
	}
	_, err := env.CRI.Exec(ctxT(t), &runtimeapi.ExecRequest{ContainerId: id, Cmd: []string{"true"}, Stdout: true})
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("Exec in a stopped container: %v, want FailedPrecondition", err)
	}
}
