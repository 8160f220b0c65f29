package tty

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/moby/term"
	"golang.org/x/sys/unix"
)

// Terminal is the local end of an interactive session: In is where keys come from (usually
// standard input), Out where the remote terminal's output goes (usually standard output). A
// Terminal is a plain description; copying it is fine and the zero IsTerminal asks the operating
// system.
type Terminal struct {
	// In is the stream crisp reads keystrokes from; raw mode applies to it.
	In io.Reader
	// Out is the stream the remote output is written to; its size is the terminal's size.
	Out io.Writer
	// IsTerminal reports whether a stream (In or Out) is a terminal. Nil means asking the operating
	// system: the stream must be an *os.File open on a terminal device (moby/term's GetFdInfo).
	// Command tests set it to pretend that buffers are terminals; raw mode and size reading still
	// need a real terminal file descriptor and are skipped silently without one.
	IsTerminal func(stream any) bool
	// KeysAsTyped is for a session without a remote TTY whose input crisp
	// watches key by key (attach -i's detach keys): instead of raw mode,
	// Safe only turns off In's line buffering and its ctrl-s/ctrl-q flow
	// control, so that ctrl-p,ctrl-q arrive when typed; echo, ^C as a
	// signal and output processing stay. The end-of-file key then arrives
	// as a byte: wrap In in an EOFReader (EOFKey).
	KeysAsTyped bool
}

// isTerminal applies the injected check, or the operating system's.
func (t Terminal) isTerminal(stream any) bool {
	if stream == nil {
		return false
	}
	if t.IsTerminal != nil {
		return t.IsTerminal(stream)
	}
	_, ok := term.GetFdInfo(stream)
	return ok
}

// terminalFd returns the file descriptor of stream when the Terminal considers it a terminal and
// it really is one (an *os.File on a terminal device): what raw mode and size reading need.
func (t Terminal) terminalFd(stream any) (uintptr, bool) {
	if !t.isTerminal(stream) {
		return 0, false
	}
	return term.GetFdInfo(stream)
}

// IsTerminalIn reports whether In is a terminal.
func (t Terminal) IsTerminalIn() bool { return t.isTerminal(t.In) }

// NoTTYWarning is the warning for "-t" when In is not a terminal (IsTerminalIn false): the caller
// carries on without a TTY (kubectl's behaviour; crictl fails instead).
const NoTTYWarning = "Unable to use a TTY: input is not a terminal; carrying on without one"

// ErrInterrupted matches (with errors.Is) the error Safe returns when SIGINT, SIGTERM or SIGHUP
// reached crisp during fn. The concrete error is a *SignalError.
var ErrInterrupted = errors.New("interrupted")

// SignalError is what Safe returns when a signal interrupted the session: the terminal has been
// restored and fn's context cancelled (context.Cause of that context is a *SignalError too).
type SignalError struct {
	// Signal is the signal crisp received.
	Signal os.Signal
	// Err is what fn returned after its context was cancelled (often context.Canceled); may be nil.
	Err error
}

// Error names the signal, e.g. "interrupted by SIGTERM".
func (e *SignalError) Error() string {
	if s, ok := e.Signal.(syscall.Signal); ok {
		if name := unix.SignalName(s); name != "" {
			return "interrupted by " + name
		}
	}
	return "interrupted by signal " + e.Signal.String()
}

// Unwrap returns fn's error.
func (e *SignalError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrInterrupted) true.
func (e *SignalError) Is(target error) bool { return target == ErrInterrupted }

// ExitCode is the shell's convention for a process ended by a signal: 128 + the signal number
// (130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP).
func (e *SignalError) ExitCode() int {
	if s, ok := e.Signal.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 128
}

// interruptSignals are the signals that end a command (NotifyContext) and a session: the
// terminal is restored when they arrive. (In raw mode ^C and ^\ are keys sent to the remote side,
// not signals; these come from kill, from a closed terminal window, or from ^C and ^\ when In is
// not a terminal.) SIGQUIT is one of them, so a script sees 131 as it does from any other program,
// not Go's goroutine dump and status 2; GOTRACEBACK=all with SIGABRT still gives the dump.
func interruptSignals() []os.Signal {
	return []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}
}

// Safe runs fn with In in raw mode (or KeysAsTyped's) and restores In's previous settings exactly (the saved termios,
// byte for byte) on every way out: fn returning nil or an error, fn panicking (the terminal is
// restored, then the panic goes on), and SIGINT, SIGTERM or SIGHUP reaching crisp while fn runs.
// The restore happens once, whichever of those paths gets there first. A failure to restore is
// returned, joined to fn's error (except after SIGHUP: a hung-up terminal cannot be restored).
//
// On a signal, Safe restores the terminal at once, cancels the context given to fn (its cause is a
// *SignalError), stops catching signals (so a second one has its default effect), waits for fn to
// return, and returns a *SignalError (errors.Is(err, ErrInterrupted)). It never exits the process:
// fn must return when its context is done.
//
// SIGQUIT (kill -QUIT; in raw mode ^\ is a key for the remote side) is handled as SIGINT is.
//
// When In is not a terminal, fn runs without raw mode, with the same handling of the signals. A panic in a goroutine other than fn's cannot be caught here and
// would leave the terminal raw: goroutines that fn starts must not panic (client-go's recover theirs).
func (t Terminal) Safe(ctx context.Context, fn func(ctx context.Context) error) (err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	// Catch signals before going raw, so none can end the process between the two.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, interruptSignals()...)
	defer signal.Stop(sigs)

	restore := func() error { return nil }
	if fd, ok := t.terminalFd(t.In); ok {
		makeRaw, mode := term.MakeRaw, "raw mode"
		if t.KeysAsTyped {
			makeRaw, mode = keysAsTyped, "key-by-key input"
		}
		state, err := makeRaw(fd)
		if err != nil {
			return fmt.Errorf("putting the terminal in %s: %w", mode, err)
		}
		var once sync.Once
		var restoreErr error
		restore = func() error {
			once.Do(func() {
				if err := term.RestoreTerminal(fd, state); err != nil {
					restoreErr = fmt.Errorf("restoring the terminal's settings: %w", err)
				}
			})
			return restoreErr
		}
	}

	var (
		wg     sync.WaitGroup
		done   = make(chan struct{})
		caught os.Signal // written by the watcher before wg.Done, read after wg.Wait
	)
	wg.Go(func() {
		select {
		case s := <-sigs:
			_ = restore() // its error is reported by the final restore, which returns the same
			signal.Stop(sigs)
			caught = s
			cancel(&SignalError{Signal: s})
		case <-done:
		}
	})

	defer func() {
		// Runs on return and on panic (the panic continues after this function).
		restoreErr := restore()
		close(done)
		wg.Wait()
		if caught != nil {
			err = &SignalError{Signal: caught, Err: err}
		}
		// After SIGHUP the terminal is usually gone (hung up): failing to restore it is expected.
		if restoreErr != nil && caught != syscall.SIGHUP {
			err = errors.Join(err, restoreErr)
		}
	}()
	return fn(ctx)
}
