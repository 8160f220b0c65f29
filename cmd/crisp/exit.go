package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/crisp-cri/crisp/internal/tty"
)

// Exit statuses. exec and attach pass the remote code through and use
// exitCrispFailure for crisp's own failures so scripts can tell them apart.
const (
	exitOK           = 0
	exitFailure      = 1
	exitUsage        = 2
	exitCrispFailure = 125
	exitInterrupted  = 130
)

// usageError marks bad flags or arguments: main prints usage hints and exits 2
// (125 for exec and attach).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usageErrorf(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// remoteExit is implemented by errors carrying a remote process's exit code
// (client-go's exec.CodeExitError and crisp's own exit errors).
type remoteExit interface {
	error
	ExitStatus() int
}

// passThroughAnnotation marks commands (exec, attach) whose exit status is the
// remote process's, with exitCrispFailure for crisp's own failures.
const passThroughAnnotation = "crisp.exit/pass-through"

// exitStatus decides the process exit status for err, once, here.
func exitStatus(err error, passThrough bool) int {
	if err == nil {
		return exitOK
	}
	var interrupted interruptedStatus
	if errors.As(err, &interrupted) {
		return interrupted.code
	}
	if passThrough {
		var re remoteExit
		if errors.As(err, &re) {
			return re.ExitStatus()
		}
		return exitCrispFailure
	}
	var ue usageError
	if errors.As(err, &ue) || isCobraUsageError(err) {
		return exitUsage
	}
	if errors.Is(err, context.Canceled) {
		return exitInterrupted
	}
	return exitFailure
}

// isCobraUsageError recognises the argument errors cobra builds itself
// (unknown commands and the like), which carry no type of their own.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, prefix := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "accepts ", "requires at least", "requires at most", "invalid argument"} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}

// notifySignals is Main's context: cancelled by SIGINT, SIGTERM or SIGHUP
// with a *tty.SignalError as its cause, so that whatever a command was
// doing when the signal came (dialing, resolving, an upgrade, a report),
// crisp exits 128+N as a shell reports it. stop unregisters the handler.
func notifySignals(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			cancel(&tty.SignalError{Signal: s})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// signalled turns a command's error into an interruptedStatus when a
// signal cancelled ctx and the command did not end with a status of its
// own (a remote exit code passed through, or one already interrupted).
func signalled(ctx context.Context, err error) error {
	var sig *tty.SignalError
	if !errors.As(context.Cause(ctx), &sig) {
		return err
	}
	var remote remoteStatus
	var interrupted interruptedStatus
	if errors.As(err, &remote) || errors.As(err, &interrupted) || errors.As(err, new(*tty.SignalError)) {
		return newInterruptedIfSignal(err)
	}
	if errors.Is(err, errReported) {
		err = nil // the command's report is out; the signal still gets its line
	}
	return interruptedStatus{code: sig.ExitCode(), msg: sig.Error(), err: err}
}

// newInterruptedIfSignal maps a *tty.SignalError a command returned as is
// to its 128+N status; other errors are left alone.
func newInterruptedIfSignal(err error) error {
	var sig *tty.SignalError
	var interrupted interruptedStatus
	if errors.As(err, &sig) && !errors.As(err, &interrupted) {
		return newInterrupted(err)
	}
	return err
}
