package mockruntime_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/rest"                //nolint:depguard // test-only: the client crictl and critest use, as an independent check of the mock
	"k8s.io/client-go/tools/remotecommand" //nolint:depguard // test-only: the client crictl and critest use, as an independent check of the mock
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
)

func benchEnv(b *testing.B) (*mocktest.Env, string, string) {
	env := mocktest.Start(b, mockruntime.Config{})
	podID := env.RunPod(b, "bench")
	id := env.RunContainer(b, podID, mocktest.ContainerSpec{Command: []string{"sleep", "100000"}})
	return env, podID, id
}

func benchExec(b *testing.B, env *mocktest.Env, id string, cmd []string, out io.Writer) {
	resp, err := env.CRI.Exec(context.Background(), &runtimeapi.ExecRequest{ContainerId: id, Cmd: cmd, Stdout: true, Stderr: true})
	if err != nil {
		b.Fatal(err)
	}
	u, err := url.Parse(resp.Url)
	if err != nil {
		b.Fatal(err)
	}
	e, err := remotecommand.NewSPDYExecutor(&rest.Config{}, http.MethodPost, u)
	if err != nil {
		b.Fatal(err)
	}
	if err := e.StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdout: out, Stderr: io.Discard}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkExecTrue is the round trip of `exec true` over SPDY: the Exec
// RPC, the upgrade, the process and its exit status.
func BenchmarkExecTrue(b *testing.B) {
	env, _, id := benchEnv(b)
	for b.Loop() {
		benchExec(b, env, id, []string{"true"}, io.Discard)
	}
}

// BenchmarkExecStdout moves 256 MiB of a process's stdout over SPDY.
func BenchmarkExecStdout(b *testing.B) {
	env, _, id := benchEnv(b)
	const size = 256 << 20
	b.SetBytes(size)
	for b.Loop() {
		benchExec(b, env, id, []string{"dd", "if=/dev/zero", "bs=1048576", fmt.Sprintf("count=%d", size>>20)}, io.Discard)
	}
}

// BenchmarkPortForwardDownload moves 256 MiB from a pod's port to the
// client over SPDY port-forward.
func BenchmarkPortForwardDownload(b *testing.B) {
	env, podID, _ := benchEnv(b)
	const size = 256 << 20
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	defer func() {
		_ = lis.Close()
		wg.Wait()
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		zeros := make([]byte, 256<<10)
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			for sent := 0; sent < size; sent += len(zeros) {
				if _, err := c.Write(zeros); err != nil {
					break
				}
			}
			_ = c.Close()
		}
	}()
	resp, err := env.CRI.PortForward(context.Background(), &runtimeapi.PortForwardRequest{PodSandboxId: podID})
	if err != nil {
		b.Fatal(err)
	}
	local, stop := spdyForward(b, resp.Url, lis.Addr().(*net.TCPAddr).Port)
	defer stop()
	b.SetBytes(size)
	for b.Loop() {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", local))
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, c)
		_ = c.Close()
		if err != nil || n != size {
			b.Fatalf("downloaded %d bytes (%v), want %d", n, err, size)
		}
	}
}

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// BenchmarkExecStdin moves 256 MiB into a process's stdin over SPDY.
func BenchmarkExecStdin(b *testing.B) {
	env, _, id := benchEnv(b)
	const size = 256 << 20
	b.SetBytes(size)
	for b.Loop() {
		resp, err := env.CRI.Exec(context.Background(), &runtimeapi.ExecRequest{ContainerId: id, Cmd: []string{"sh", "-c", "dd bs=1048576 of=/dev/null 2>/dev/null; echo done"}, Stdin: true, Stdout: true, Stderr: true})
		if err != nil {
			b.Fatal(err)
		}
		u, _ := url.Parse(resp.Url)
		e, err := remotecommand.NewSPDYExecutor(&rest.Config{}, http.MethodPost, u)
		if err != nil {
			b.Fatal(err)
		}
		var out strings.Builder
		err = e.StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdin: io.LimitReader(zeros{}, size), Stdout: &out, Stderr: io.Discard})
		if err != nil || strings.TrimSpace(out.String()) != "done" {
			b.Fatalf("dd = %q, %v; want done", out.String(), err)
		}
	}
}

// BenchmarkStartClose is a runtime's start-up and shutdown (busybox applet
// links, both servers, socket), what `crisp demo` and every test pay.
func BenchmarkStartClose(b *testing.B) {
	for b.Loop() {
		env, err := mocktest.StartRuntime(context.Background(), mockruntime.Config{})
		if err != nil {
			b.Fatal(err)
		}
		if err := env.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
