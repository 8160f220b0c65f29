package mockruntime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/creack/pty"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"

	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
)

// backend runs what the streaming server's sessions ask for on host
// processes and the host loopback.
type backend struct{ r *Runtime }

var _ streamserver.Backend = (*backend)(nil)

// Exec runs cmd in the container's environment, wired to the stream. A
// non-zero exit is reported as utilexec.CodeExitError.
func (b *backend) Exec(ctx context.Context, containerID string, cmd []string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommandserver.TerminalSize) error {
	c, err := b.r.runningContainer(containerID)
	if err != nil {
		return err
	}
	code, err := b.r.runExec(ctx, c, cmd, in, writerOrNil(out), writerOrNil(errOut), tty, resize)
	if err != nil {
		return err
	}
	if code != 0 {
		return utilexec.CodeExitError{Err: fmt.Errorf("command %q exited with %d", cmd, code), Code: code}
	}
	return nil
}

// writerOrNil keeps a nil interface nil (a typed nil would be written to).
func writerOrNil(w io.WriteCloser) io.Writer {
	if w == nil {
		return nil
	}
	return w
}

// runExec runs cmd in c and returns its exit code once it has ended and its
// output has been delivered. in, out and errOut may be nil. Cancelling ctx
// kills the process.
func (r *Runtime) runExec(ctx context.Context, c *container, cmd []string, in io.Reader, out, errOut io.Writer, tty bool, resize <-chan remotecommandserver.TerminalSize) (int, error) {
	if len(cmd) == 0 {
		return 0, errors.New("exec needs a command")
	}
	path, err := r.procEnv.resolve(c.kind, cmd[0], envValue(c.spec.env, "PATH"))
	if err != nil {
		return 0, fmt.Errorf("exec in container %s: %w", c.id, err)
	}
	spec := procSpec{
		argv:  append([]string{path}, cmd[1:]...),
		env:   c.spec.env,
		dir:   c.spec.dir,
		tty:   tty,
		stdin: in != nil,
	}
	if tty && envValue(spec.env, "TERM") == "" {
		spec.env = append(append([]string(nil), spec.env...), "TERM=xterm")
	}
	if tty && resize != nil {
		spec.size = firstSize(ctx, resize)
	}
	p, err := r.startExec(c, spec)
	if err != nil {
		return 0, fmt.Errorf("exec in container %s: %w", c.id, err)
	}
	defer r.forgetExec(c, p)
	r.goTracked(p.wait)
	stopKill := context.AfterFunc(ctx, p.kill)
	defer stopKill()

	if in != nil {
		w := p.stdinWriter()
		// The copier may stay blocked reading the client's stream after the
		// process is gone; the runtime owns it until the stream closes.
		r.goTracked(func() {
			_, _ = io.CopyBuffer(w, in, make([]byte, pumpBuffer))
			if !tty {
				// End of input is the end of the process's stdin. With a
				// TTY it is not: the terminal stays, as on containerd.
				_ = p.stdin.Close()
			}
		})
	}

	var wg sync.WaitGroup
	if tty && resize != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			applyResizes(p, resize, p.done)
		}()
	}
	var pumps sync.WaitGroup
	for _, o := range p.outputs() {
		w := out
		if o.stream == streamStderr {
			w = errOut
		}
		pumps.Add(1)
		go func() {
			defer pumps.Done()
			p.pump(o.f, func(b []byte) error {
				if w == nil {
					return nil
				}
				_, err := w.Write(b)
				return err
			})
		}()
	}
	<-p.done
	wg.Wait() // applyResizes is done with p.pty before drain closes it
	p.drain(&pumps)
	return p.exitCode, nil
}

// startExec starts an exec process, registered with its container and the
// runtime so that stopping either ends it.
func (r *Runtime) startExec(c *container, spec procSpec) (*hostProc, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing {
		return nil, errors.New("the mock runtime is shutting down")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return nil, fmt.Errorf("container %s is %s, not running", c.id, stateName(c.state))
	}
	p, err := startProc(spec)
	if err != nil {
		return nil, err
	}
	c.execs[p] = struct{}{}
	r.execs[p] = struct{}{}
	return p, nil
}

func (r *Runtime) forgetExec(c *container, p *hostProc) {
	r.mu.Lock()
	delete(r.execs, p)
	r.mu.Unlock()
	c.mu.Lock()
	delete(c.execs, p)
	c.mu.Unlock()
}

// firstSizeWait is how long a TTY exec waits for the client's first
// terminal size before it starts the process without one.
const firstSizeWait = 100 * time.Millisecond

// firstSize waits briefly for the client's first terminal size, so that the
// process starts with it: a command that reads its size at once (stty size)
// then sees it, instead of racing the resize as it does on containerd.
func firstSize(ctx context.Context, resize <-chan remotecommandserver.TerminalSize) *pty.Winsize {
	timer := time.NewTimer(firstSizeWait)
	defer timer.Stop()
	select {
	case size, ok := <-resize:
		if ok && size.Width > 0 && size.Height > 0 {
			return &pty.Winsize{Rows: size.Height, Cols: size.Width}
		}
	case <-timer.C:
	case <-ctx.Done():
	}
	return nil
}

// applyResizes sets the terminal's size for every size the client sends,
// until the channel closes or the process has ended.
func applyResizes(p *hostProc, resize <-chan remotecommandserver.TerminalSize, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case size, open := <-resize:
			if !open {
				return
			}
			if size.Width > 0 && size.Height > 0 {
				p.setSize(&pty.Winsize{Rows: size.Height, Cols: size.Width})
			}
		}
	}
}

// Attach connects the stream to the container's main process: output from
// now on, input to its stdin. It returns when the container exits, when the
// client goes away, or when a TTY client ends its input (a detach).
func (b *backend) Attach(ctx context.Context, containerID string, in io.Reader, out, errOut io.WriteCloser, tty bool, resize <-chan remotecommandserver.TerminalSize) error {
	c, err := b.r.runningContainer(containerID)
	if err != nil {
		return err
	}
	c.mu.Lock()
	exited, proc, stdinOnce := c.exited, c.proc, c.config.GetStdinOnce()
	c.mu.Unlock()

	a := &attacher{out: writerOrNil(out), errOut: writerOrNil(errOut), gone: make(chan struct{})}
	if !c.addAttacher(a, exited) {
		return nil
	}
	defer c.removeAttacher(a)

	var wg sync.WaitGroup
	defer wg.Wait()
	stop := make(chan struct{})
	defer close(stop)
	if tty && resize != nil && proc != nil && proc.pty != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			applyResizes(proc, resize, stop)
		}()
	}

	// inputEnded gets nil at the client's end of input, the error when
	// reading it failed (the client went away).
	inputEnded := make(chan error, 1)
	endsWithStdin := b.r.cfg.Quirks.AttachEndsWithStdin && !tty
	if in == nil && endsWithStdin {
		return nil // CRI-O: no stdin to wait for, the stream ends at once
	}
	if in != nil {
		b.r.goTracked(func() {
			buf := make([]byte, 32*1024)
			for {
				n, err := in.Read(buf)
				if n > 0 {
					_ = c.writeStdin(buf[:n])
				}
				if errors.Is(err, io.EOF) {
					if stdinOnce {
						c.endStdin()
					}
					inputEnded <- nil
					return
				}
				if err != nil {
					inputEnded <- err
					return
				}
			}
		})
	}

	for {
		select {
		case <-exited:
			return nil
		case <-a.gone:
			return nil
		case <-b.r.done:
			return errors.New("the mock runtime is shutting down")
		case <-ctx.Done():
			return ctx.Err()
		case err := <-inputEnded:
			// The end of a TTY client's input is a detach (kubectl and
			// crictl end it that way); a failed read means it is gone.
			if err != nil || tty || endsWithStdin {
				return nil
			}
			// Without a TTY the output goes on until the container exits.
			inputEnded = nil
		}
	}
}

// forwardBuffers hold what port-forward copies from the pod to the client:
// 256 KiB writes are 256 KiB frames; 32 KiB ones cost the mock about 1.7x
// the CPU per byte and the client 1.2x (2000 MiB through crisp port-forward).
var forwardBuffers = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// PortForward connects the stream to 127.0.0.1:port, the pod's loopback
// (every pod shares the host's), copying both ways and passing half-closes
// on in both directions.
func (b *backend) PortForward(ctx context.Context, podSandboxID string, port int32, stream io.ReadWriteCloser) error {
	p, err := b.r.findPod(podSandboxID)
	if err != nil {
		return err
	}
	if p.getState() != runtimeapi.PodSandboxState_SANDBOX_READY {
		return fmt.Errorf("pod %s is not ready; port-forward needs a running pod", p.id)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(p.loopbackPort(port)))
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := d.DialContext(dctx, "tcp", addr)
	cancel()
	if err != nil {
		return fmt.Errorf("port-forward to pod %s: dial %s: %w", p.id, addr, err)
	}
	tcp := conn.(*net.TCPConn)
	defer func() { _ = tcp.Close() }()
	stopAbort := context.AfterFunc(ctx, func() {
		_ = tcp.Close()
		_ = stream.Close()
	})
	defer stopAbort()

	var wg sync.WaitGroup
	var upErr, downErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		// client -> pod: the client's half-close becomes the pod side's.
		_, upErr = io.Copy(tcp, stream)
		_ = tcp.CloseWrite()
		if upErr != nil {
			_ = tcp.Close()
		}
	}()
	// pod -> client: the pod's half-close becomes the client's EOF.
	buf := forwardBuffers.Get().(*[]byte)
	// Not io.Copy: TCPConn's WriteTo would copy in 32 KiB pieces, one
	// SPDY frame (and a few syscalls on each side) per piece.
	_, downErr = io.CopyBuffer(stream, struct{ io.Reader }{tcp}, *buf)
	forwardBuffers.Put(buf)
	if cw, ok := stream.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	} else {
		// httpstream (SPDY) streams half-close on Close.
		_ = stream.Close()
	}
	wg.Wait()
	if downErr != nil && !errors.Is(downErr, net.ErrClosed) {
		return fmt.Errorf("port-forward to pod %s, %s: %w", p.id, addr, downErr)
	}
	return nil
}
