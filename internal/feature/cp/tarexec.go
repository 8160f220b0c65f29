package cp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/session"
	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/transport/remotecommand"
)

// execer runs commands in the container over crisp's own exec streaming.
type execer struct {
	deps   session.Deps
	cli    *client.Client
	id     string
	offers []transport.Offer
	cfg    transport.Config
}

// execError is a command in the container that did not succeed: its exit
// status (-1 when it never ran) and what it said on stderr.
type execError struct {
	cmd    []string
	code   int
	stderr string
	err    error
}

func (e *execError) Error() string {
	msg := strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(e.stderr), "\n", " / ")), " ")
	if msg == "" && e.err != nil {
		msg = e.err.Error()
	}
	if e.code >= 0 {
		return fmt.Sprintf("`%s` in the container exited with status %d: %s", strings.Join(e.cmd, " "), e.code, msg)
	}
	return fmt.Sprintf("`%s` in the container: %s", strings.Join(e.cmd, " "), msg)
}

func (e *execError) Unwrap() error { return e.err }

// missing says the command's program is not in the container: exit 126 or
// 127 as a shell reports it, or the runtime's own "not found" when it
// could not start it.
func (e *execError) missing() bool {
	text := strings.ToLower(e.stderr)
	if e.err != nil {
		text += " " + strings.ToLower(e.err.Error())
	}
	return e.code == 126 || e.code == 127 ||
		strings.Contains(text, "executable file not found") || strings.Contains(text, "no such file or directory") && strings.Contains(text, "exec")
}

// stderrCap bounds what is kept of a command's stderr.
const stderrCap = 64 << 10

type cappedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := stderrCap - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// run runs cmd with stdin (nil: none) and stdout (nil: discarded).
func (x *execer) run(ctx context.Context, cmd []string, stdin io.Reader, stdout io.Writer) error {
	if stdout == nil {
		stdout = io.Discard
	}
	var stderr cappedBuffer
	req := &runtimeapi.ExecRequest{ContainerId: x.id, Cmd: cmd, Stdin: stdin != nil, Stdout: true, Stderr: true}
	// tar ends at its end-of-archive blocks, not at the end of stdin, so
	// piped input is safe on protocols that cannot pass that end on:
	// InteractiveStdin lifts the guard that would refuse them.
	s := remotecommand.Streams{Stdin: stdin, Stdout: stdout, Stderr: &stderr, InteractiveStdin: stdin != nil}
	_, err := x.deps.Stream(ctx, "cp", x.cli.ExecSource("cp", req), x.offers, x.cfg, s)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return err
	}
	var coded interface{ ExitStatus() int }
	code := -1
	if errors.As(err, &coded) {
		code = coded.ExitStatus()
	}
	return &execError{cmd: cmd, code: code, stderr: stderr.String(), err: err}
}

// tarSide is the container side of tar over exec.
type tarSide struct{ x *execer }

// packTo runs `tar -c` of remote in the container, its archive to w.
func (t tarSide) packTo(ctx context.Context, remote string, w io.Writer) error {
	dir, base := path.Split(path.Clean(remote))
	if dir == "" {
		dir = "/"
	}
	return t.x.run(ctx, []string{"tar", "-c", "-f", "-", "-C", dir, base}, nil, w)
}

// isDir says whether p is a directory in the container (`test -d`; a
// container without test has it taken as no, as kubectl cp does).
func (t tarSide) isDir(ctx context.Context, p string) bool {
	return t.x.run(ctx, []string{"test", "-d", p}, nil, nil) == nil
}

// exists says whether p exists in the container (`test -e`).
func (t tarSide) exists(ctx context.Context, p string) bool {
	return t.x.run(ctx, []string{"test", "-e", p}, nil, nil) == nil
}
