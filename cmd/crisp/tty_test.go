package main

// Terminal behaviour under a real pseudo-terminal: the crisp binary (this
// test binary, copied as "crisp" into $PATH by testscript.Main) runs with a
// pty as its controlling terminal, against an in-process mock runtime.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
	"github.com/crisp-cri/crisp/internal/tty"
)

// ptyWait bounds every wait for output; a guard against hangs, never a
// measurement.
const ptyWait = 20 * time.Second

// ptySession is crisp running on a pseudo-terminal.
type ptySession struct {
	t     *testing.T
	ptmx  *os.File // the terminal's master side: what a user's terminal emulator holds
	tty   *os.File // the side crisp gets as stdin, stdout, stderr and controlling terminal
	cmd   *exec.Cmd
	mu    sync.Mutex
	out   bytes.Buffer
	read  sync.WaitGroup
	ended chan struct{}
	err   error // crisp's exit, once ended is closed
}

// startPTY starts `crisp args...` on a new pty of the given size.
func startPTY(t *testing.T, rows, cols uint16, args ...string) *ptySession {
	t.Helper()
	crisp := scriptCrisp.Path(t)
	ptmx, tty, err := pty.Open()
	if err != nil {
		skipOrFail(t, "no pseudo-terminal: %v", err)
	}
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: rows, Cols: cols}); err != nil {
		t.Fatal(err)
	}
	s := &ptySession{t: t, ptmx: ptmx, tty: tty, ended: make(chan struct{})}
	s.cmd = exec.Command(crisp, args...)
	s.cmd.Stdin, s.cmd.Stdout, s.cmd.Stderr = tty, tty, tty
	s.cmd.Env = append(os.Environ(), "CRI_CONFIG_FILE=/dev/null")
	// A session of its own with the pty as controlling terminal: resizes
	// then deliver SIGWINCH to crisp, as a terminal emulator's do.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	s.read.Add(1)
	go func() {
		defer s.read.Done()
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			s.mu.Lock()
			s.out.Write(buf[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		select {
		case <-s.ended:
		default:
			_ = s.cmd.Process.Kill()
			<-s.ended
		}
		_ = ptmx.Close()
		_ = tty.Close()
		s.read.Wait()
	})
	return s
}

// run starts crisp; the termios of the terminal is taken first.
func (s *ptySession) run() {
	s.t.Helper()
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	go func() {
		s.err = s.cmd.Wait()
		close(s.ended)
	}()
}

// waitOutput waits until the output since mark matches re and returns the
// new mark (the end of the output seen).
func (s *ptySession) waitOutput(mark int, re string) int {
	s.t.Helper()
	rx := regexp.MustCompile(re)
	var out string
	var loc []int
	ended := false
	found := testkit.Poll(ptyWait, func() bool {
		s.mu.Lock()
		out = s.out.String()
		s.mu.Unlock()
		if loc = rx.FindStringIndex(out[mark:]); loc != nil {
			return true
		}
		select {
		case <-s.ended:
			ended = true
			return true
		default:
			return false
		}
	})
	switch {
	case loc != nil:
		return mark + loc[1]
	case ended:
		s.t.Fatalf("crisp ended (%v) before %q appeared; output:\n%q", s.err, re, out)
	case !found:
		s.t.Fatalf("no %q in the terminal's output within %s; output:\n%q", re, ptyWait, out)
	}
	return mark
}

func (s *ptySession) typeText(text string) {
	s.t.Helper()
	if _, err := io.WriteString(s.ptmx, text); err != nil {
		s.t.Fatal(err)
	}
}

// wait waits for crisp to end and returns its exit status.
func (s *ptySession) wait() int {
	s.t.Helper()
	select {
	case <-s.ended:
	case <-time.After(ptyWait):
		s.mu.Lock()
		out := s.out.String()
		s.mu.Unlock()
		s.t.Fatalf("crisp did not end within %s; output:\n%q", ptyWait, out)
	}
	var exitErr *exec.ExitError
	if errors.As(s.err, &exitErr) {
		return exitErr.ExitCode()
	}
	if s.err != nil {
		s.t.Fatal(s.err)
	}
	return 0
}

// termios returns the terminal's settings as raw bytes, for byte-for-byte
// comparison.
func termios(t *testing.T, f *os.File) []byte {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(tio)), unsafe.Sizeof(*tio))...)
}

func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// ptyContainer starts a mock runtime (closed by the caller or at cleanup)
// with a long-running container.
func ptyContainer(t *testing.T, profile streamserver.Profile) (*mocktest.Env, string) {
	t.Helper()
	env, err := mocktest.StartRuntime(context.Background(), mockruntime.Config{Profile: profile})
	if err != nil {
		skipOrFail(t, "mock runtime: %v", err)
	}
	var once sync.Once
	closeEnv := func() { once.Do(func() { _ = env.Close() }) }
	t.Cleanup(closeEnv)
	pod, err := env.CreatePod(context.Background(), "tty")
	if err != nil {
		t.Fatal(err)
	}
	ctr, err := env.CreateContainer(context.Background(), pod, mocktest.ContainerSpec{Name: "shell", Command: []string{"sleep", "3600"}})
	if err != nil {
		t.Fatal(err)
	}
	return env, ctr
}

// prompt matches a shell prompt at the end of the output, with the
// terminal controls busybox ash sends after it.
const prompt = `[$#>] (?:\x1b\[[0-9;]*[A-Za-z])*$`

// TestExecTTYPromptResizeRestore runs on the full profile (WebSocket v5) and
// on cri-streaming (SPDY v4, with containerd's "end of a TTY's stdin is a
// detach").
func TestExecTTYPromptResizeRestore(t *testing.T) {
	for _, profile := range []streamserver.Profile{streamserver.ProfileFull, streamserver.ProfileCRIStreaming} {
		t.Run(string(profile), func(t *testing.T) { testExecTTY(t, profile) })
	}
}

func testExecTTY(t *testing.T, profile streamserver.Profile) {
	env, ctr := ptyContainer(t, profile)
	s := startPTY(t, 24, 80, "-r", env.Endpoint, "exec", "-it", ctr, "sh")
	before := termios(t, s.tty)
	s.run()
	m := s.waitOutput(0, prompt)

	if during := termios(t, s.tty); bytes.Equal(during, before) {
		t.Errorf("the terminal is not in raw mode during the session")
	}

	// The initial size arrived with the stream.
	s.typeText("stty size\n")
	m = s.waitOutput(m, `24 80\r?\n`)
	m = s.waitOutput(m, prompt)

	// A resize reaches the remote terminal (SIGWINCH -> resize stream). Ask
	// until it has arrived: the only wait is for the signal's delivery.
	if err := pty.Setsize(s.ptmx, &pty.Winsize{Rows: 40, Cols: 100}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(ptyWait)
	for {
		s.typeText("stty size\n")
		m = s.waitOutput(m, `\d+ \d+\r?\n`)
		s.mu.Lock()
		got := s.out.String()[:m]
		s.mu.Unlock()
		m = s.waitOutput(m, prompt)
		if regexp.MustCompile(`40 100\r?\n$`).MatchString(got) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stty size never reported 40 100 after the resize; output:\n%q", got)
		}
	}

	s.typeText("exit 3\n")
	if code := s.wait(); code != 3 {
		t.Errorf("crisp exited %d, want the shell's 3", code)
	}
	if after := termios(t, s.tty); !bytes.Equal(after, before) {
		t.Errorf("terminal settings differ after exit:\nbefore %x\nafter  %x", before, after)
	}
}

func TestExecTTYRestoredWhenRuntimeDies(t *testing.T) {
	env, ctr := ptyContainer(t, streamserver.ProfileFull)
	s := startPTY(t, 24, 80, "-r", env.Endpoint, "exec", "-it", ctr, "sh")
	before := termios(t, s.tty)
	s.run()
	m := s.waitOutput(0, prompt)
	if err := env.Close(); err != nil {
		t.Logf("closing the mock runtime: %v", err)
	}
	code := s.wait()
	if code == 0 {
		t.Errorf("crisp exited 0 after losing its runtime mid-session")
	}
	if after := termios(t, s.tty); !bytes.Equal(after, before) {
		t.Errorf("terminal settings differ after the runtime died:\nbefore %x\nafter  %x", before, after)
	}
	s.mu.Lock()
	t.Logf("exit %d; output after the prompt: %q", code, s.out.String()[m:])
	s.mu.Unlock()
}

func TestExecTTYWithoutTerminalWarns(t *testing.T) {
	env, ctr := ptyContainer(t, streamserver.ProfileFull)
	var out, errOut bytes.Buffer
	code := Main([]string{"-r", env.Endpoint, "exec", "-it", ctr, "--", "sh", "-c", "test -t 0 && echo tty || echo notty"},
		cmdutil.IOStreams{In: bytes.NewReader(nil), Out: &out, ErrOut: &errOut, IsTerminalIn: func() bool { return false }})
	if code != 0 || out.String() != "notty\n" {
		t.Errorf("exit %d, stdout %q, want 0 and notty", code, out.String())
	}
	if want := "crisp: warning: " + tty.NoTTYWarning + "\n"; errOut.String() != want {
		t.Errorf("stderr %q, want the no-TTY warning", errOut.String())
	}
}

func TestAttachTTYDetachKeys(t *testing.T) {
	env, err := mocktest.StartRuntime(context.Background(), mockruntime.Config{})
	if err != nil {
		skipOrFail(t, "mock runtime: %v", err)
	}
	t.Cleanup(func() { _ = env.Close() })
	pod, err := env.CreatePod(context.Background(), "tty")
	if err != nil {
		t.Fatal(err)
	}
	ctr, err := env.CreateContainer(context.Background(), pod, mocktest.ContainerSpec{Name: "shell", Command: []string{"sh"}, TTY: true, Stdin: true})
	if err != nil {
		t.Fatal(err)
	}
	s := startPTY(t, 24, 80, "-r", env.Endpoint, "attach", "-it", ctr)
	before := termios(t, s.tty)
	s.run()
	// The shell already printed its prompt before we attached: ask for output.
	s.typeText("echo attached-$((6*7))\n")
	s.waitOutput(0, `attached-42`)
	s.typeText("\x10\x11") // ctrl-p, ctrl-q
	if code := s.wait(); code != 0 {
		t.Errorf("crisp exited %d after the detach keys, want 0", code)
	}
	if after := termios(t, s.tty); !bytes.Equal(after, before) {
		t.Errorf("terminal settings differ after detaching:\nbefore %x\nafter  %x", before, after)
	}
	// Detached, not ended: the shell still answers.
	s2 := startPTY(t, 24, 80, "-r", env.Endpoint, "attach", "-it", ctr)
	s2.run()
	s2.typeText("echo still-$((6*7))\n")
	s2.waitOutput(0, `still-42`)
	s2.typeText("\x10\x11")
	if code := s2.wait(); code != 0 {
		t.Errorf("second attach exited %d, want 0", code)
	}
}

// TestAttachStdinDetachKeysWithoutTTY: attach -i without -t, in a
// terminal. The terminal's line buffering held ctrl-p back until Enter and
// its flow control took ctrl-q (XON), so the detach keys never arrived.
// Now they do, while the terminal still echoes and takes ^C as a signal;
// its settings come back byte for byte.
func TestAttachStdinDetachKeysWithoutTTY(t *testing.T) {
	env, err := mocktest.StartRuntime(context.Background(), mockruntime.Config{})
	if err != nil {
		skipOrFail(t, "mock runtime: %v", err)
	}
	t.Cleanup(func() { _ = env.Close() })
	pod, err := env.CreatePod(context.Background(), "keys")
	if err != nil {
		t.Fatal(err)
	}
	ctr, err := env.CreateContainer(context.Background(), pod, mocktest.ContainerSpec{Name: "cat", Command: []string{"cat"}, Stdin: true})
	if err != nil {
		t.Fatal(err)
	}
	s := startPTY(t, 24, 80, "-r", env.Endpoint, "attach", "-i", ctr)
	before := termios(t, s.tty)
	s.run()
	// The terminal echoes the line, and cat sends it back: twice.
	s.typeText("hello-keys\n")
	s.waitOutput(0, `hello-keys\r?\n(?:.|\n)*hello-keys`)
	tio, err := unix.IoctlGetTermios(int(s.tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if tio.Lflag&unix.ICANON != 0 || tio.Iflag&unix.IXON != 0 {
		t.Errorf("during attach -i the terminal still buffers lines or takes ctrl-q: lflag %#x iflag %#x", tio.Lflag, tio.Iflag)
	}
	if tio.Lflag&(unix.ECHO|unix.ISIG) != unix.ECHO|unix.ISIG {
		t.Errorf("during attach -i the terminal no longer echoes or takes ^C as a signal (it is not a TTY session): lflag %#x", tio.Lflag)
	}
	s.typeText("\x10\x11") // ctrl-p, ctrl-q
	if code := s.wait(); code != 0 {
		t.Errorf("crisp exited %d after the detach keys, want 0", code)
	}
	if after := termios(t, s.tty); !bytes.Equal(after, before) {
		t.Errorf("terminal settings differ after detaching:\nbefore %x\nafter  %x", before, after)
	}
	// Detached, not ended: cat still answers.
	s2 := startPTY(t, 24, 80, "-r", env.Endpoint, "attach", "-i", ctr)
	s2.run()
	s2.typeText("again-keys\n")
	s2.waitOutput(0, `again-keys\r?\n(?:.|\n)*again-keys`)
	s2.typeText("\x10\x11")
	if code := s2.wait(); code != 0 {
		t.Errorf("second attach exited %d, want 0", code)
	}
}
