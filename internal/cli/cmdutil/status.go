package cmdutil

import (
	"context"
	"errors"
	"fmt"

	"github.com/crisp-cri/crisp/internal/tty"
)

// RemoteStatus is a remote process's exit status, passed through as
// crisp's own. It is already "reported": the remote process said what it
// had to say on its own streams, so crisp adds no line of its own.
type RemoteStatus struct{ Code int }

func (e RemoteStatus) Error() string {
	return fmt.Sprintf("remote command exited with status %d", e.Code)
}

// ExitStatus is the remote exit code.
func (e RemoteStatus) ExitStatus() int { return e.Code }

// Is makes the status "already reported": Main prints no line for it.
func (e RemoteStatus) Is(target error) bool { return target == ErrReported }

// InterruptedStatus is a session ended by SIGINT, SIGTERM or SIGHUP: exit
// 128+signal, as a shell reports it.
type InterruptedStatus struct {
	Code int
	Msg  string
	Err  error
}

// ExitStatus is 128 + the signal number.
func (e InterruptedStatus) ExitStatus() int { return e.Code }
func (e InterruptedStatus) Error() string   { return e.Msg }
func (e InterruptedStatus) Unwrap() error   { return e.Err }

// NewInterrupted is the InterruptedStatus of err: 128+N for the signal it
// carries (a *tty.SignalError), ExitInterrupted without one.
func NewInterrupted(err error) error {
	var sig *tty.SignalError
	if errors.As(err, &sig) {
		return InterruptedStatus{Code: sig.ExitCode(), Msg: sig.Error(), Err: err}
	}
	return InterruptedStatus{Code: ExitInterrupted, Msg: "interrupted", Err: err}
}

// Signalled turns a command's error into an InterruptedStatus when a
// signal cancelled ctx (tty.NotifyContext) and the command did not end
// with a status of its own (a remote exit code passed through, or one
// already interrupted).
func Signalled(ctx context.Context, err error) error {
	var sig *tty.SignalError
	if !errors.As(context.Cause(ctx), &sig) {
		return err
	}
	var remote RemoteStatus
	var interrupted InterruptedStatus
	if errors.As(err, &remote) || errors.As(err, &interrupted) || errors.As(err, new(*tty.SignalError)) {
		return newInterruptedIfSignal(err)
	}
	if errors.Is(err, ErrReported) {
		err = nil // the command's report is out; the signal still gets its line
	}
	return InterruptedStatus{Code: sig.ExitCode(), Msg: sig.Error(), Err: err}
}

// newInterruptedIfSignal maps a *tty.SignalError a command returned as is
// to its 128+N status; other errors are left alone.
func newInterruptedIfSignal(err error) error {
	var sig *tty.SignalError
	var interrupted InterruptedStatus
	if errors.As(err, &sig) && !errors.As(err, &interrupted) {
		return NewInterrupted(err)
	}
	return err
}
