package streamserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"
)

// fakeBackend runs a tiny command language instead of processes:
//
//	echo ARGS...     prints ARGS joined by spaces and a newline
//	cat              copies stdin to stdout until EOF
//	wc               reads stdin to EOF, prints the byte count
//	stderr TEXT      prints TEXT to stderr
//	exit N           exits with code N
//	fail             fails to start (a plain error)
//	yes N            prints N bytes of 'y'
//	zeros N          prints N zero bytes in 32 KiB writes
//	size             prints the first terminal size as WxH
//	sleep            waits for its context
//
// Attach copies stdin to stdout. PortForward dials 127.0.0.1:port.
type fakeBackend struct {
	mu       sync.Mutex
	forwards []int32
	sleepers chan struct{} // a token per sleep that started
}

func (b *fakeBackend) Exec(ctx context.Context, containerID string, cmd []string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommandserver.TerminalSize) error {
	if len(cmd) == 0 {
		return errors.New("empty command")
	}
	write := func(w io.Writer, s string) error {
		if w == nil {
			return nil
		}
		_, err := io.WriteString(w, s)
		return err
	}
	switch cmd[0] {
	case "echo":
		return write(out, strings.Join(cmd[1:], " ")+"\n")
	case "cat":
		if in == nil {
			return nil
		}
		_, err := io.Copy(out, in)
		return err
	case "wc":
		n, err := io.Copy(io.Discard, in)
		if err != nil {
			return err
		}
		return write(out, strconv.FormatInt(n, 10)+"\n")
	case "stderr":
		return write(errOut, strings.Join(cmd[1:], " ")+"\n")
	case "exit":
		code, _ := strconv.Atoi(cmd[1])
		return utilexec.CodeExitError{Err: fmt.Errorf("exit status %d", code), Code: code}
	case "fail":
		return errors.New("executable file not found")
	case "yes":
		n, _ := strconv.Atoi(cmd[1])
		_, err := out.Write(bytes.Repeat([]byte("y"), n))
		return err
	case "zeros":
		n, _ := strconv.Atoi(cmd[1])
		buf := make([]byte, 32<<10)
		for n > 0 {
			chunk := min(n, len(buf))
			if _, err := out.Write(buf[:chunk]); err != nil {
				return err
			}
			n -= chunk
		}
		return nil
	case "size":
		select {
		case sz, ok := <-resize:
			if !ok {
				return write(out, "no size\n")
			}
			return write(out, fmt.Sprintf("%dx%d\n", sz.Width, sz.Height))
		case <-ctx.Done():
			return ctx.Err()
		}
	case "sleep":
		b.sleepers <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	}
	return fmt.Errorf("unknown command %q", cmd[0])
}

func (b *fakeBackend) Attach(ctx context.Context, containerID string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommandserver.TerminalSize) error {
	if out != nil {
		if _, err := io.WriteString(out, "attached to "+containerID+"\n"); err != nil {
			return err
		}
	}
	if in != nil && out != nil {
		_, err := io.Copy(out, in)
		return err
	}
	return nil
}

func (b *fakeBackend) PortForward(ctx context.Context, podID string, port int32, stream io.ReadWriteCloser) error {
	b.mu.Lock()
	b.forwards = append(b.forwards, port)
	b.mu.Unlock()
	defer func() { _ = stream.Close() }()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(c, stream)
		_ = c.(*net.TCPConn).CloseWrite()
	}()
	_, err = io.Copy(stream, c)
	select {
	case <-done:
	case <-ctx.Done():
	}
	_ = c.Close()
	<-done
	return err
}

// echoListener is a TCP echo server on loopback; it stops with the test.
func echoListener(t testing.TB) int32 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { _ = c.Close() }()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return int32(ln.Addr().(*net.TCPAddr).Port)
}

// startServer starts a server for the test and closes it at cleanup.
func startServer(t testing.TB, cfg Config) (*server, *fakeBackend) {
	t.Helper()
	b := &fakeBackend{sleepers: make(chan struct{}, 100)}
	if cfg.StreamCreationTimeout == 0 {
		cfg.StreamCreationTimeout = 5 * time.Second
	}
	srv, err := New(cfg, b)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	return srv.(*server), b
}

// responseURL is the parsed URL of a streaming server's answer, which must
// have come (err nil).
func responseURL(t testing.TB, resp interface{ GetUrl() string }, err error) *url.URL {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(resp.GetUrl())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func execURL(t testing.TB, s Server, req *runtimeapi.ExecRequest) *url.URL {
	t.Helper()
	if req.ContainerId == "" {
		req.ContainerId = "c1"
	}
	resp, err := s.GetExec(req)
	return responseURL(t, resp, err)
}

func attachURL(t testing.TB, s Server, req *runtimeapi.AttachRequest) *url.URL {
	t.Helper()
	if req.ContainerId == "" {
		req.ContainerId = "c1"
	}
	resp, err := s.GetAttach(req)
	return responseURL(t, resp, err)
}

func portForwardURL(t testing.TB, s Server, req *runtimeapi.PortForwardRequest) *url.URL {
	t.Helper()
	if req.PodSandboxId == "" {
		req.PodSandboxId = "p1"
	}
	resp, err := s.GetPortForward(req)
	return responseURL(t, resp, err)
}

// has reports whether tok is outstanding.
func (c *tokenCache) has(tok string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.entries[tok]
	return ok
}
