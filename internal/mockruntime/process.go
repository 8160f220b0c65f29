package mockruntime

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// drainIdle is how long the output of an ended process may stay silent
// before the mock assumes a leftover child holds the pipe, kills the process
// group and closes the pipe. Real runtimes hang forever in that case; a mock
// that must leave nothing behind cannot.
const drainIdle = 2 * time.Second

// Output plumbing sizes: the pipe of a process's output, and the chunks
// read from it and written to the stream.
const (
	pipeSize   = 1 << 20
	pumpBuffer = 256 << 10
)

// procSpec is a host process to start: a resolved argv, its environment and
// working directory, and how its stdio is wired.
type procSpec struct {
	argv  []string // argv[0] is a path
	env   []string
	dir   string
	tty   bool
	stdin bool
	// size is the terminal's initial size (TTY only); nil leaves the
	// default.
	size *pty.Winsize
}

// hostProc is a host process in its own process group (a new session when it
// has a terminal), so that stopping it reaches its children too.
type hostProc struct {
	cmd *exec.Cmd
	// pty is the terminal's master side when the process has a TTY: its
	// output, its input and its size.
	pty *os.File
	// stdin is the write end of the process's stdin pipe (no TTY, stdin
	// asked for); nil otherwise.
	stdin *os.File
	// stdout and stderr are the read ends of its output pipes (no TTY).
	stdout, stderr *os.File

	done     chan struct{} // closed once the process has been reaped
	exitCode int           // valid after done
	// lastRead is when output was last read (unix nanoseconds), and
	// emitting how many pumps are handing a chunk to the stream: drain
	// tells a silent output from a slow reader with them.
	lastRead atomic.Int64
	emitting atomic.Int32
	// ptyMu orders resizes (from exec and attach streams) with closeFiles.
	ptyMu     sync.Mutex
	ptyClosed bool
}

// setSize resizes the terminal unless closeFiles has closed it.
func (p *hostProc) setSize(ws *pty.Winsize) {
	p.ptyMu.Lock()
	defer p.ptyMu.Unlock()
	if p.pty != nil && !p.ptyClosed {
		_ = setTerminalSize(p.pty, ws.Rows, ws.Cols)
	}
}

// startProc starts spec; the caller's runtime reaps it (see Runtime.reap).
func startProc(spec procSpec) (*hostProc, error) {
	cmd := &exec.Cmd{Path: spec.argv[0], Args: spec.argv, Env: spec.env, Dir: spec.dir}
	p := &hostProc{cmd: cmd, done: make(chan struct{})}
	p.lastRead.Store(time.Now().UnixNano())
	if spec.tty {
		// Pdeathsig: if the mock dies without Close, its processes die too.
		master, err := pty.StartWithAttrs(cmd, spec.size, &syscall.SysProcAttr{Setsid: true, Setctty: true, Pdeathsig: syscall.SIGKILL})
		if err != nil {
			return nil, fmt.Errorf("start %q with a terminal: %w", spec.argv[0], err)
		}
		p.pty, err = pollable(master)
		if err != nil {
			p.kill()
			_ = cmd.Wait()
			return nil, fmt.Errorf("start %q with a terminal: %w", spec.argv[0], err)
		}
		return p, nil
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var childEnds []*os.File
	closeAll := func(fs ...*os.File) {
		for _, f := range fs {
			if f != nil {
				_ = f.Close()
			}
		}
	}
	if spec.stdin {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("create a stdin pipe: %w", err)
		}
		cmd.Stdin, p.stdin = r, w
		childEnds = append(childEnds, r)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(append(childEnds, p.stdin)...)
		return nil, fmt.Errorf("create a stdout pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(append(childEnds, p.stdin, outR, outW)...)
		return nil, fmt.Errorf("create a stderr pipe: %w", err)
	}
	for _, f := range []*os.File{p.stdin, outR, errR} {
		growPipe(f)
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	p.stdout, p.stderr = outR, errR
	childEnds = append(childEnds, outW, errW)
	if err := cmd.Start(); err != nil {
		closeAll(append(childEnds, p.stdin, outR, errR)...)
		return nil, fmt.Errorf("start %q: %w", spec.argv[0], err)
	}
	// The child has its own copies; holding ours would hide its EOF.
	closeAll(childEnds...)
	return p, nil
}

// pollable returns the terminal master f as a non-blocking, poller-backed
// file. creack/pty leaves it blocking (its ioctls go through Fd), and a
// blocked read of a blocking file is not ended by Close, which drain needs
// when a process that left the session holds the terminal.
func pollable(f *os.File) (*os.File, error) {
	fd, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	_ = f.Close()
	if err != nil {
		return nil, fmt.Errorf("duplicate the terminal: %w", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		return nil, fmt.Errorf("make the terminal non-blocking: %w", err)
	}
	return os.NewFile(uintptr(fd), "/dev/ptmx"), nil
}

// setTerminalSize sets the size of the terminal f without making it
// blocking (pty.Setsize would, through Fd).
func setTerminalSize(f *os.File, rows, cols uint16) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		serr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols})
	})
	if err != nil {
		return err
	}
	return serr
}

// growPipe enlarges a pipe so that a fast writer runs ahead of the stream:
// fewer wake-ups, larger reads (the default 64 KiB halves exec throughput).
// Failing (a lowered fs.pipe-max-size) only costs speed. It goes through
// SyscallConn because Fd would make the pipe blocking, and a blocked read
// could then not be ended by Close (see drain).
func growPipe(f *os.File) {
	if f == nil {
		return
	}
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize) })
	}
}

// wait reaps the process and records its exit code (128+signal when a
// signal ended it, as shells and runtimes report it).
func (p *hostProc) wait() {
	err := p.cmd.Wait()
	code := 0
	if ps := p.cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		} else {
			code = ps.ExitCode()
		}
	} else if err != nil {
		code = 255
	}
	p.exitCode = code
	close(p.done)
}

// signal sends sig to the process's group; a group already gone is fine.
func (p *hostProc) signal(sig syscall.Signal) {
	pid := p.cmd.Process.Pid
	_ = syscall.Kill(-pid, sig)
	if p.pty != nil {
		// A shell on a terminal puts each job in a process group of its
		// own, within the session the process leads: reach those too.
		for _, member := range sessionMembers(pid) {
			_ = syscall.Kill(member, sig)
		}
	}
}

// sessionMembers lists the processes of session sid, from /proc.
func sessionMembers(sid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == sid {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp session ...; comm may hold anything,
		// so fields are counted after its closing parenthesis.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) > 3 {
			if s, _ := strconv.Atoi(fields[3]); s == sid {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// kill ends the whole process group at once.
func (p *hostProc) kill() { p.signal(syscall.SIGKILL) }

// outputs are the streams to pump: the terminal, or stdout and stderr.
func (p *hostProc) outputs() []procOutput {
	if p.pty != nil {
		return []procOutput{{f: p.pty, stream: streamStdout}}
	}
	return []procOutput{{f: p.stdout, stream: streamStdout}, {f: p.stderr, stream: streamStderr}}
}

type procOutput struct {
	f      *os.File
	stream string
}

// pump copies one output of p to emit until EOF (or EIO: a terminal whose
// every slave side has closed).
func (p *hostProc) pump(f *os.File, emit func([]byte) error) {
	buf := make([]byte, pumpBuffer)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			p.emitting.Add(1)
			failed := emit(buf[:n]) != nil
			p.lastRead.Store(time.Now().UnixNano())
			p.emitting.Add(-1)
			if failed {
				// Nobody wants the output any more; keep reading so the
				// process does not block on a full pipe.
				emit = func([]byte) error { return nil }
			}
		}
		if err != nil {
			return
		}
	}
}

// drain waits for the pumps of an ended process. If its output stays silent
// for drainIdle while the pumps still run (and none is handing output to a
// slow stream: that output is late, not silent), a leftover member of its group
// holds the output open: the group is killed and the pipes closed, so the
// pumps (and the caller) finish.
func (p *hostProc) drain(pumps *sync.WaitGroup) {
	pumped := make(chan struct{})
	go func() {
		pumps.Wait()
		close(pumped)
	}()
	tick := time.NewTicker(drainIdle / 8)
	defer tick.Stop()
	for {
		select {
		case <-pumped:
			p.closeFiles()
			return
		case <-tick.C:
			if p.emitting.Load() > 0 || time.Since(time.Unix(0, p.lastRead.Load())) < drainIdle {
				continue
			}
			p.kill()
			p.closeFiles()
			<-pumped
			return
		}
	}
}

// closeFiles closes the parent's ends of the stdio; reads blocked on them
// return.
func (p *hostProc) closeFiles() {
	p.ptyMu.Lock()
	p.ptyClosed = true
	p.ptyMu.Unlock()
	for _, f := range []*os.File{p.pty, p.stdin, p.stdout, p.stderr} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// stdinWriter is where input for the process goes: the terminal or the stdin
// pipe; nil when the process has no stdin.
func (p *hostProc) stdinWriter() io.Writer {
	if p.pty != nil {
		return p.pty
	}
	if p.stdin != nil {
		return p.stdin
	}
	return nil
}

// lookPath finds name in the folders of pathEnv, as a shell in the container
// would. Names with a slash are used as they are.
func lookPath(name, pathEnv string) (string, error) {
	if strings.Contains(name, "/") {
		if err := isExecutable(name); err != nil {
			return "", err
		}
		return name, nil
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			continue
		}
		path := filepath.Join(dir, name)
		if isExecutable(path) == nil {
			return path, nil
		}
	}
	return "", fmt.Errorf("%q: executable file not found in $PATH (%s)", name, pathEnv)
}

func isExecutable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s: %w", path, errors.New("not an executable file"))
	}
	return nil
}
