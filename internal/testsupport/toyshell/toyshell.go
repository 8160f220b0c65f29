// Package toyshell is the one fake streaming backend of crisp's tests: a
// tiny command interpreter that the mock's streaming server
// (internal/mockruntime/streamserver) runs in-process instead of host
// processes. The mock's own tests, the streaming stack's and probe's drive
// that server over this shell, so every test of a streaming session meets
// the same server and the same commands.
//
// It implements streamserver.Backend without importing it (the mock's
// tests import this package) and imports nothing of crisp's, so the mock's
// tests share no client code through it.
//
// The commands (arguments split as the CRI request splits them):
//
//	true                 exits 0
//	echo ARGS...         prints ARGS joined by spaces and a newline
//	cat                  copies stdin to stdout until EOF
//	wc [-l | -c]         reads stdin to EOF, prints its bytes (or lines)
//	head -c N [/dev/zero] copies N bytes of stdin (or zeros) to stdout
//	dd if=/dev/zero bs=B count=C   prints B*C zero bytes
//	stderr TEXT...       prints TEXT to stderr
//	exit N               exits with code N
//	fail                 fails to start (a plain error)
//	yes N                prints N bytes of 'y'
//	zeros N              prints N zero bytes in 32 KiB writes
//	size                 prints the first terminal size as WxH
//	sleep [D]            waits D (seconds, or a Go duration such as 300ms)
//	                     or, without D, for its context; says so on Sleepers
//	abc N                prints N bytes, 'a' to 'z' over and over
//	readline             reads one line, prints "got a line", never waits for EOF
//	sh -c SCRIPT         statements separated by ";", each one of the above,
//	                     with ">&2" (to stderr) and "2>/dev/null"; "A | wc -c"
//	                     counts what A reads of stdin; a script that runs
//	                     `stty size` prints the terminal's size as "H W", and
//	                     when it loops ("while") waits for a new size and
//	                     prints that too
//
// Attach prints "attached to ID" and copies stdin to stdout; a container
// whose ID starts with "quiet" prints nothing and holds the session until
// its end. PortForward dials 127.0.0.1:PORT (the mock's pods share the host
// loopback).
package toyshell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"
)

// Shell is the backend. The zero value is ready to use.
type Shell struct {
	// Sleepers, when set, gets a token each time a `sleep` starts (a
	// buffered channel: a full one is not waited on).
	Sleepers chan struct{}

	mu       sync.Mutex
	forwards []int32
}

// Forwards lists the ports PortForward was asked for, in order.
func (s *Shell) Forwards() []int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int32(nil), s.forwards...)
}

// ExitCode is a command's exit with code, as runtimes report it.
func ExitCode(code int) error {
	return utilexec.CodeExitError{Err: fmt.Errorf("exit status %d", code), Code: code}
}

// run is one command's streams; nil streams read EOF and discard.
type run struct {
	ctx    context.Context
	in     io.Reader
	out    io.Writer
	errOut io.Writer
	resize <-chan remotecommandserver.TerminalSize
	shell  *Shell
}

// Exec runs cmd.
func (s *Shell) Exec(ctx context.Context, _ string, cmd []string, in io.Reader, out, errOut io.WriteCloser, _ bool, resize <-chan remotecommandserver.TerminalSize) error {
	r := run{ctx: ctx, in: strings.NewReader(""), out: io.Discard, errOut: io.Discard, resize: resize, shell: s}
	if in != nil {
		var done func()
		r.in, done = pump(in)
		defer done()
	}
	if out != nil {
		r.out = out
	}
	if errOut != nil {
		r.errOut = errOut
	}
	if len(cmd) == 0 {
		return errors.New("empty command")
	}
	return r.command(cmd)
}

func (r run) command(cmd []string) error {
	args := cmd[1:]
	arg := func(i int) int64 {
		if i >= len(args) {
			return 0
		}
		n, _ := strconv.ParseInt(args[i], 10, 64)
		return n
	}
	switch cmd[0] {
	case "true":
		return nil
	case "echo":
		return r.print(r.out, strings.Join(args, " ")+"\n")
	case "cat":
		_, err := io.Copy(r.out, r.in)
		return r.ended(err)
	case "wc":
		data, err := io.ReadAll(r.in)
		if err != nil {
			return r.ended(err)
		}
		n := len(data)
		if len(args) > 0 && args[0] == "-l" {
			n = bytes.Count(data, []byte("\n"))
		}
		return r.print(r.out, strconv.Itoa(n)+"\n")
	case "head": // head -c N [/dev/zero]
		src := r.in
		if len(args) > 2 && args[2] == "/dev/zero" {
			src = zeros{}
		}
		_, err := io.CopyN(r.out, src, arg(1))
		return r.ended(err)
	case "dd": // dd if=/dev/zero bs=B count=C
		return r.zeros(ddSize(args))
	case "stderr":
		return r.print(r.errOut, strings.Join(args, " ")+"\n")
	case "exit":
		if code := int(arg(0)); code != 0 {
			return ExitCode(code)
		}
		return nil
	case "fail":
		return errors.New("executable file not found")
	case "yes":
		_, err := r.out.Write(bytes.Repeat([]byte("y"), int(arg(0))))
		return err
	case "zeros":
		return r.zeros(arg(0))
	case "size":
		select {
		case sz, ok := <-r.resize:
			if !ok {
				return r.print(r.out, "no size\n")
			}
			return r.print(r.out, fmt.Sprintf("%dx%d\n", sz.Width, sz.Height))
		case <-r.ctx.Done():
			return r.ctx.Err()
		}
	case "sleep":
		if r.shell.Sleepers != nil {
			select {
			case r.shell.Sleepers <- struct{}{}:
			default:
			}
		}
		if len(args) == 0 {
			<-r.ctx.Done()
			return r.ctx.Err()
		}
		d, err := sleepDuration(args[0])
		if err != nil {
			_ = r.print(r.errOut, "sleep: "+err.Error()+"\n")
			return ExitCode(1)
		}
		select {
		case <-time.After(d):
			return nil
		case <-r.ctx.Done():
			return r.ctx.Err()
		}
	case "abc":
		_, err := io.Copy(r.out, io.LimitReader(&alphabet{}, arg(0)))
		return r.ended(err)
	case "readline":
		buf := make([]byte, 1)
		for {
			if _, err := r.in.Read(buf); err != nil || buf[0] == '\n' {
				break
			}
		}
		return r.print(r.out, "got a line\n")
	case "sh":
		if len(args) == 2 && args[0] == "-c" {
			return r.script(args[1])
		}
	}
	_ = r.print(r.errOut, cmd[0]+": not found\n")
	return ExitCode(127)
}

// pump copies in to the command through a pipe, as a runtime copies the
// client's stdin into a process's, and goes on reading in (discarding)
// after the command is done until in ends: a command that stops reading
// early (head -c) must not leave the client's last bytes unread on the
// connection, or closing it sends a reset that can destroy output still on
// its way to the client. done ends the command's side of the pipe.
func pump(in io.Reader) (io.Reader, func()) {
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, in)
		pw.CloseWithError(err)
		_, _ = io.Copy(io.Discard, in) // ends when the stream does
	}()
	return pr, func() { _ = pr.Close() }
}

// script runs an `sh -c` script of the shapes the package doc lists.
func (r run) script(script string) error {
	if strings.Contains(script, "stty size") {
		return r.sttySize(strings.Contains(script, "while"))
	}
	if left, right, ok := strings.Cut(script, "|"); ok && strings.TrimSpace(right) == "wc -c" {
		f := strings.Fields(left)
		n := ddSize(f)
		if len(f) > 2 && f[0] == "head" {
			n, _ = strconv.ParseInt(f[2], 10, 64)
		}
		m, err := io.CopyN(io.Discard, r.in, n)
		_ = r.print(r.out, fmt.Sprintf("%d\n", m))
		return r.ended(err)
	}
	for _, stmt := range strings.Split(script, ";") {
		f := strings.Fields(stmt)
		sub := r
		var words []string
		for _, w := range f {
			switch w {
			case ">&2":
				sub.out = r.errOut
			case "2>/dev/null":
				sub.errOut = io.Discard
			default:
				words = append(words, w)
			}
		}
		if len(words) == 0 {
			continue
		}
		if err := sub.command(words); err != nil {
			return err
		}
	}
	return nil
}

// sttySize prints the terminal's first size; with loop, it waits (up to
// 5 s, as the check's script does) for a different one and prints that.
func (r run) sttySize(loop bool) error {
	var first remotecommandserver.TerminalSize
	select {
	case first = <-r.resize:
	case <-r.ctx.Done():
		return r.ctx.Err()
	}
	if err := r.print(r.out, fmt.Sprintf("%d %d\r\n", first.Height, first.Width)); err != nil || !loop {
		return err
	}
	last := first
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	for last == first {
		select {
		case sz, ok := <-r.resize:
			if !ok {
				return r.print(r.out, fmt.Sprintf("%d %d\r\n", last.Height, last.Width))
			}
			last = sz
		case <-deadline.C:
			return r.print(r.out, fmt.Sprintf("%d %d\r\n", last.Height, last.Width))
		case <-r.ctx.Done():
			return r.ctx.Err()
		}
	}
	return r.print(r.out, fmt.Sprintf("%d %d\r\n", last.Height, last.Width))
}

func (r run) print(w io.Writer, s string) error {
	_, err := io.WriteString(w, s)
	return err
}

// zeros writes n zero bytes in 32 KiB writes.
func (r run) zeros(n int64) error {
	buf := make([]byte, 32<<10)
	for n > 0 {
		chunk := min(n, int64(len(buf)))
		if _, err := r.out.Write(buf[:chunk]); err != nil {
			return err
		}
		n -= chunk
	}
	return nil
}

// ended is err, or the context's end when that came first.
func (r run) ended(err error) error {
	if r.ctx.Err() != nil {
		return r.ctx.Err()
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// ddSize is bs*count of dd's arguments.
func ddSize(args []string) int64 {
	var bs, count int64
	for _, w := range args {
		if v, ok := strings.CutPrefix(w, "bs="); ok {
			bs, _ = strconv.ParseInt(v, 10, 64)
		}
		if v, ok := strings.CutPrefix(w, "count="); ok {
			count, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return bs * count
}

// sleepDuration reads sleep's argument: seconds (2, 0.5) or a Go
// duration (300ms).
func sleepDuration(arg string) (time.Duration, error) {
	if secs, err := strconv.ParseFloat(arg, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(arg)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("invalid time interval %q", arg)
	}
	return d, nil
}

// alphabet reads 'a' to 'z' over and over: output whose every byte says
// where it belongs, so a lost, doubled or reordered chunk shows.
type alphabet struct{ n int }

func (a *alphabet) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a' + byte((a.n+i)%26)
	}
	a.n += len(p)
	return len(p), nil
}

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(b []byte) (int, error) {
	clear(b)
	return len(b), nil
}

// Attach prints "attached to ID" and copies stdin to stdout; a "quiet..."
// container's main process prints nothing until the session ends.
func (s *Shell) Attach(ctx context.Context, containerID string, in io.Reader, out, _ io.WriteCloser, _ bool, _ <-chan remotecommandserver.TerminalSize) error {
	if strings.HasPrefix(containerID, "quiet") {
		<-ctx.Done()
		return nil
	}
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

// PortForward dials 127.0.0.1:port and copies both ways: the app's end
// becomes the client's EOF (SPDY streams half-close on Close), the client's
// end the app's (CloseWrite); it returns once both are done. ctx's end
// closes the app's side.
func (s *Shell) PortForward(ctx context.Context, _ string, port int32, stream io.ReadWriteCloser) error {
	s.mu.Lock()
	s.forwards = append(s.forwards, port)
	s.mu.Unlock()
	// Closing the stream is not waited on: spdystream's Close waits for
	// the stream's reply to have gone out, for good when the client hung
	// up before it did, and the streaming server's Close, which waits for
	// this handler, would then hang.
	closeStream := func() { go func() { _ = stream.Close() }() }
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		closeStream()
		return err
	}
	defer func() { _ = c.Close() }()
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	up := make(chan struct{})
	go func() {
		defer close(up)
		_, _ = io.Copy(c, stream)
		_ = c.(*net.TCPConn).CloseWrite()
	}()
	_, err = io.Copy(stream, c)
	closeStream()
	<-up // ends with the client's side of the stream
	return err
}
