package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/crisp-cri/crisp/internal/base/outfile"
	"github.com/crisp-cri/crisp/internal/transport"
)

// Exit statuses. exec and attach pass the remote code through and use
// ExitCrispFailure for crisp's own failures so scripts can tell them apart.
const (
	ExitOK           = 0
	ExitFailure      = 1
	ExitUsage        = 2
	ExitCrispFailure = 125
	ExitInterrupted  = 130
)

// UsageError marks bad flags or arguments: Main prints usage hints and
// exits 2 (125 for exec and attach).
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// UsageErrorf is a UsageError with a formatted message.
func UsageErrorf(format string, args ...any) error {
	return UsageError{fmt.Errorf(format, args...)}
}

// ErrReported is returned (or wrapped) by a command that already printed
// its failure (for example a smoke report ending in "N passed, N failed"),
// so Main only sets the exit status.
var ErrReported = errors.New("failure already reported")

// PassThroughAnnotation marks commands (exec, attach) whose exit status is
// the remote process's, with ExitCrispFailure for crisp's own failures.
const PassThroughAnnotation = "crisp.exit/pass-through"

// ExitStatus decides the process exit status for err, once, for Main.
func ExitStatus(err error, passThrough bool) int {
	if err == nil {
		return ExitOK
	}
	var interrupted InterruptedStatus
	if errors.As(err, &interrupted) {
		return interrupted.Code
	}
	if passThrough {
		var re transport.RemoteExit
		if errors.As(err, &re) {
			return re.ExitStatus()
		}
		return ExitCrispFailure
	}
	if IsUsage(err) {
		return ExitUsage
	}
	if errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	return ExitFailure
}

// IsUsage says whether err is about the command line: a UsageError, one
// of the argument errors cobra builds itself, or an output file named on it
// that crisp will not write (a FIFO, a link, a directory there).
func IsUsage(err error) bool {
	var ue UsageError
	return errors.As(err, &ue) || errors.Is(err, outfile.ErrRefused) || isCobraUsageError(err)
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
