package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/client/clienttest"
)

// fakeRuntime is clienttest's fake CRI runtime, asked for URLs through
// crisp's CRI client (CRIURLs), behind a fake streaming server: it redeems
// each URL once for the request it was handed out for, and streams it with
// a tiny command interpreter, enough of busybox for the checks. The target
// is container c1 in pod p1.
type fakeRuntime struct {
	CRIURLs
	cri      *clienttest.Fake
	accepted func(call Call, p Protocol) bool
	// lostExit makes these protocols report success whatever the exit code
	// (a defect for smoke to find).
	lostExit map[Protocol]bool
	// echoPort answers port-forward connections on this port as an echo server.
	echoPort int32
}

func newFake(t testing.TB, accepted func(Call, Protocol) bool) *fakeRuntime {
	t.Helper()
	cri := &clienttest.Fake{}
	cri.AddPod(&runtimeapi.PodSandbox{Id: "p1", State: runtimeapi.PodSandboxState_SANDBOX_READY})
	cri.AddContainer(&runtimeapi.Container{Id: "c1", PodSandboxId: "p1", State: runtimeapi.ContainerState_CONTAINER_RUNNING})
	c, err := client.Dial(client.Settings{RuntimeEndpoint: clienttest.Serve(t, cri), RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() }) // the test is over
	return &fakeRuntime{CRIURLs: CRIURLs{Client: c}, cri: cri, accepted: accepted}
}

type fakeExit int

func (e fakeExit) Error() string   { return fmt.Sprintf("command terminated with exit code %d", int(e)) }
func (e fakeExit) ExitStatus() int { return int(e) }

func (f *fakeRuntime) Stream(ctx context.Context, u string, p Protocol, s Session) (Handshake, error) {
	req, ok := f.cri.Redeem(u)
	if !ok {
		return Handshake{Status: 404, Reason: "Not Found"}, errors.New("404")
	}
	call := CallExec
	if _, ok := req.(*runtimeapi.AttachRequest); ok {
		call = CallAttach
	}
	if !f.accepted(call, p) {
		return Handshake{Status: 403, Reason: "Forbidden: unsupported protocol"}, errors.New("upgrade refused: 403")
	}
	hs := Handshake{Accepted: true, Negotiated: p.Name}
	if call == CallAttach {
		if s.Stdout != nil {
			_, _ = io.WriteString(s.Stdout, "tick\n")
		}
		<-ctx.Done()
		return hs, ctx.Err()
	}
	caps := capabilities(CallExec, p)
	err := runFake(ctx, req.(*runtimeapi.ExecRequest).Cmd, s, caps)
	if f.lostExit[p] {
		if _, ok := exitStatus(err); ok {
			err = nil
		}
	}
	if code, ok := exitStatus(err); ok && code != 0 && !caps.ExitCode {
		err = errors.New("error executing command, exit status " + strconv.Itoa(code))
	}
	return hs, err
}

func runFake(ctx context.Context, cmd []string, s Session, caps Capabilities) error {
	stdin := s.Stdin
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	if !caps.StdinEOF || !s.CloseStdin {
		// The server never sees the end of stdin.
		stdin = io.MultiReader(stdin, blockUntil(ctx))
	}
	out, errOut := s.Stdout, s.Stderr
	if out == nil {
		out = io.Discard
	}
	if errOut == nil {
		errOut = io.Discard
	}
	line := strings.Join(cmd, " ")
	switch {
	case line == "true":
		return nil
	case line == "cat":
		_, err := io.Copy(out, stdin)
		return ctxErr(ctx, err)
	case line == "wc -l":
		data, err := io.ReadAll(stdin)
		if err != nil {
			return ctxErr(ctx, err)
		}
		_, _ = fmt.Fprintf(out, "%d\n", bytes.Count(data, []byte("\n")))
		return nil
	case strings.HasPrefix(line, "head -c "):
		fields := strings.Fields(line)
		n, _ := strconv.ParseInt(fields[2], 10, 64)
		src := stdin
		if len(fields) > 3 {
			src = zeros{}
		}
		_, err := io.CopyN(out, src, n)
		return ctxErr(ctx, err)
	case strings.HasPrefix(line, "sh -c ") && strings.HasSuffix(line, "| wc -c"):
		// zeroSink: count SIZE bytes of stdin.
		n := sinkSize(line)
		m, err := io.CopyN(io.Discard, stdin, n)
		_, _ = fmt.Fprintf(out, "%d\n", m)
		return ctxErr(ctx, err)
	case strings.HasPrefix(line, "sh -c ") && strings.Contains(line, "/dev/zero"):
		// zeroSource: dd blocks and a head remainder.
		_, err := io.CopyN(out, zeros{}, sourceSize(line))
		return ctxErr(ctx, err)
	case line == "sh -c exit 7":
		return fakeExit(7)
	case line == "sh -c echo to-stdout; echo to-stderr >&2":
		_, _ = io.WriteString(out, "to-stdout\n")
		_, _ = io.WriteString(errOut, "to-stderr\n")
		return nil
	case strings.Contains(line, "stty size"):
		if !s.TTY || s.Size == nil || !caps.Resize {
			return fakeExit(1)
		}
		_, _ = fmt.Fprintf(out, "%d %d\r\n", s.Size.Height, s.Size.Width)
		if strings.Contains(line, "while") {
			// ttyCheck's command: print the size again once it changes.
			select {
			case ts := <-s.Resize:
				_, _ = fmt.Fprintf(out, "%d %d\r\n", ts.Height, ts.Width)
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	_, _ = fmt.Fprintf(errOut, "%s: not found\n", cmd[0])
	return fakeExit(127)
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

type ctxReader struct{ ctx context.Context }

func (r ctxReader) Read([]byte) (int, error) {
	<-r.ctx.Done()
	return 0, r.ctx.Err()
}

func blockUntil(ctx context.Context) io.Reader { return ctxReader{ctx} }

func (f *fakeRuntime) Forward(ctx context.Context, u string, p Protocol, port int32) (Handshake, Conn, error) {
	if _, ok := f.cri.Redeem(u); !ok {
		return Handshake{Status: 404, Reason: "Not Found"}, nil, errors.New("404")
	}
	if !f.accepted(CallPortForward, p) {
		return Handshake{Status: 403, Reason: "Forbidden"}, nil, errors.New("upgrade refused: 403")
	}
	hs := Handshake{Accepted: true, Negotiated: p.Name}
	if port == 0 {
		return hs, nil, nil
	}
	if port != f.echoPort {
		return hs, nil, fmt.Errorf("nothing listens on port %d", port)
	}
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	go func() {
		// An echo server that closes its side when the client half-closes.
		_, err := io.Copy(fromServer, toServer)
		fromServer.CloseWithError(err)
	}()
	return hs, &pipeConn{r: toClient, w: fromClient, rClose: toServer}, nil
}

// pipeConn is the client end of the fake echo connection.
type pipeConn struct {
	r      *io.PipeReader
	w      *io.PipeWriter
	rClose *io.PipeReader
}

func (c *pipeConn) Read(b []byte) (int, error)  { return c.r.Read(b) }
func (c *pipeConn) Write(b []byte) (int, error) { return c.w.Write(b) }
func (c *pipeConn) CloseWrite() error           { return c.w.Close() }
func (c *pipeConn) Close() error {
	_ = c.w.Close()      // pipe closes cannot fail
	_ = c.rClose.Close() // pipe closes cannot fail
	return c.r.Close()
}
func sinkSize(line string) int64 {
	f := strings.Fields(line)
	for i, w := range f {
		if w == "-c" && i+1 < len(f) && f[i-1] == "head" {
			n, _ := strconv.ParseInt(f[i+1], 10, 64)
			return n
		}
	}
	var bs, count int64
	for _, w := range f {
		if v, ok := strings.CutPrefix(w, "bs="); ok {
			bs, _ = strconv.ParseInt(v, 10, 64)
		}
		if v, ok := strings.CutPrefix(w, "count="); ok {
			count, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return bs * count
}

func sourceSize(line string) int64 {
	var total int64
	for _, part := range strings.Split(strings.TrimPrefix(line, "sh -c "), ";") {
		total += sinkSize(part)
	}
	return total
}
