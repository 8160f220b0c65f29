package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
