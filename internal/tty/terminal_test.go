package tty

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal and returns its terminal side (what crisp sees as stdin/stdout)
// and its controlling side (what a terminal emulator holds). It skips when there is none, except
// in CI, where it fails.
func openPTY(t *testing.T) (tty, ptmx *os.File) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("opening a pseudo-terminal: %v", err)
		}
		t.Skipf("no pseudo-terminal available (%v); these tests need /dev/ptmx", err)
	}
	t.Cleanup(func() {
		// Tests may have closed either already; nothing to check.
		_ = tty.Close()
		_ = ptmx.Close()
	})
	return tty, ptmx
}

func termios(t *testing.T, f *os.File) unix.Termios {
	t.Helper()
	tios, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatalf("reading the terminal's settings: %v", err)
	}
	return *tios
}

// assertRaw fails unless f is in raw mode: no line editing, no echo, no signals from keys.
func assertRaw(t *testing.T, f *os.File) {
	t.Helper()
	tios := termios(t, f)
	if tios.Lflag&(unix.ICANON|unix.ECHO|unix.ISIG) != 0 {
		t.Errorf("terminal not raw inside Safe: lflag %#x still has ICANON, ECHO or ISIG", tios.Lflag)
	}
}

// assertRestored fails unless f's settings are byte-identical to before (unix.Termios has no
// padding, so == compares every byte).
func assertRestored(t *testing.T, f *os.File, before unix.Termios) {
	t.Helper()
	if after := termios(t, f); after != before {
		t.Errorf("terminal settings not restored:\nbefore %+v\nafter  %+v", before, after)
	}
}

// cookedPTY returns a pseudo-terminal whose settings are not the defaults, so that restoring
// "some sane mode" instead of the saved one would show.
func cookedPTY(t *testing.T) (*os.File, unix.Termios) {
	tty, _, before := cookedPTYPair(t)
	return tty, before
}

// cookedPTYPair is cookedPTY with the controlling side too, for tests that read what the terminal
// shows.
func cookedPTYPair(t *testing.T) (tty, ptmx *os.File, before unix.Termios) {
	tty, ptmx = openPTY(t)
	tios := termios(t, tty)
	tios.Cc[unix.VERASE] = 0x08 // ^H
	tios.Lflag |= unix.ECHOCTL
	tios.Iflag |= unix.IUTF8
	if err := unix.IoctlSetTermios(int(tty.Fd()), unix.TCSETS, &tios); err != nil {
		t.Fatal(err)
	}
	return tty, ptmx, termios(t, tty)
}

func TestSafeRestores(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		fnErr   error
		wantErr error
	}{
		{"normal return", nil, nil},
		{"error", boom, boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tty, before := cookedPTY(t)
			term := Terminal{In: tty, Out: tty}
			ran := false
			err := term.Safe(context.Background(), func(ctx context.Context) error {
				ran = true
				assertRaw(t, tty)
				return tc.fnErr
			})
			if !ran {
				t.Fatal("fn did not run")
			}
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Errorf("Safe = %v, want %v", err, tc.wantErr)
			}
			if errors.Is(err, ErrInterrupted) {
				t.Errorf("Safe = %v: not an interruption", err)
			}
			assertRestored(t, tty, before)
		})
	}
}

func TestSafeRestoresOnPanic(t *testing.T) {
	tty, before := cookedPTY(t)
	term := Terminal{In: tty, Out: tty}
	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("recovered %v, want the panic to go on with its value", r)
		}
		assertRestored(t, tty, before)
	}()
	_ = term.Safe(context.Background(), func(ctx context.Context) error {
		assertRaw(t, tty)
		panic("boom")
	})
	t.Error("Safe returned; want the panic to go on")
}

// TestSafeRestoresOnSignal sends the signal to the test process itself while fn runs: Safe must
// restore the terminal before cancelling fn's context, and report the interruption.
func TestSafeRestoresOnSignal(t *testing.T) {
	for _, tc := range []struct {
		sig      syscall.Signal
		name     string
		exitCode int
	}{
		{syscall.SIGTERM, "SIGTERM", 143},
		{syscall.SIGINT, "SIGINT", 130},
		{syscall.SIGHUP, "SIGHUP", 129},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tty, before := cookedPTY(t)
			term := Terminal{In: tty, Out: tty}
			err := term.Safe(context.Background(), func(ctx context.Context) error {
				assertRaw(t, tty)
				if err := syscall.Kill(os.Getpid(), tc.sig); err != nil {
					t.Fatal(err)
				}
				<-ctx.Done()
				assertRestored(t, tty, before) // already, while fn is still running
				var cause *SignalError
				if !errors.As(context.Cause(ctx), &cause) || cause.Signal != tc.sig {
					t.Errorf("context cause %v, want a *SignalError for %v", context.Cause(ctx), tc.sig)
				}
				return ctx.Err()
			})
			assertRestored(t, tty, before)
			var se *SignalError
			if !errors.As(err, &se) || se.Signal != tc.sig {
				t.Fatalf("Safe = %v, want a *SignalError for %v", err, tc.sig)
			}
			if !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.Canceled) {
				t.Errorf("Safe = %v: want it to match ErrInterrupted and fn's context.Canceled", err)
			}
			if got := err.Error(); got != "interrupted by "+tc.name {
				t.Errorf("message %q, want %q", got, "interrupted by "+tc.name)
			}
			if se.ExitCode() != tc.exitCode {
				t.Errorf("ExitCode() = %d, want %d", se.ExitCode(), tc.exitCode)
			}
		})
	}
}

func TestSafeWithoutTerminal(t *testing.T) {
	for _, tc := range []struct {
		name string
		term Terminal
	}{
		{"buffers", Terminal{In: strings.NewReader(""), Out: &bytes.Buffer{}}},
		{"pretend terminal", Terminal{In: strings.NewReader(""), Out: &bytes.Buffer{}, IsTerminal: func(any) bool { return true }}},
		{"nil streams", Terminal{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			boom := errors.New("boom")
			err := tc.term.Safe(context.Background(), func(ctx context.Context) error { return boom })
			if !errors.Is(err, boom) {
				t.Fatalf("Safe = %v, want fn's error", err)
			}
		})
	}
}

// TestSafeNotTerminalByChoice: a real terminal that the injected check calls "not a terminal" is
// left alone.
func TestSafeNotTerminalByChoice(t *testing.T) {
	tty, before := cookedPTY(t)
	term := Terminal{In: tty, Out: tty, IsTerminal: func(any) bool { return false }}
	_ = term.Safe(context.Background(), func(ctx context.Context) error {
		assertRestored(t, tty, before) // untouched
		return nil
	})
}

func TestIsTerminalIn(t *testing.T) {
	tty, _ := openPTY(t)
	for _, tc := range []struct {
		name string
		term Terminal
		want bool
	}{
		{"pty", Terminal{In: tty, Out: tty}, true},
		{"pty in, buffer out", Terminal{In: tty, Out: &bytes.Buffer{}}, true},
		{"buffer in", Terminal{In: strings.NewReader(""), Out: tty}, false},
		{"regular file", Terminal{In: devNull(t)}, false},
		{"nil in", Terminal{}, false},
		{"pretend terminal", Terminal{In: strings.NewReader(""), IsTerminal: func(any) bool { return true }}, true},
		{"pretend not", Terminal{In: tty, IsTerminal: func(any) bool { return false }}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.term.IsTerminalIn() != tc.want {
				t.Errorf("IsTerminalIn = %v, want %v", tc.term.IsTerminalIn(), tc.want)
			}
		})
	}
}

// devNull opens /dev/null: a file that is not a terminal.
func devNull(t *testing.T) *os.File {
	t.Helper()
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() }) // read-only
	return f
}
