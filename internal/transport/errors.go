package transport

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/streaming/pkg/httpstream"
)

// RefusedError is a streaming server's refusal of an upgrade: it answered
// with something other than a switch to one of the offered protocols. It
// unwraps to k8s.io/streaming's UpgradeFailureError, so
// httpstream.IsUpgradeFailure reports it as a reason to fall back.
type RefusedError struct {
	Offer Offer
	URL   string
	// Status is the HTTP status code of the answer (0 when the server
	// switched protocols but chose none that was offered).
	Status int
	// Reason is the status text and the server's message, trimmed.
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%s refused at %s (%s)", e.Offer, Shorten(e.URL), Shorten(e.Reason))
}

// Unwrap makes the refusal an upgrade failure in client-go's terms.
func (e *RefusedError) Unwrap() error {
	return &httpstream.UpgradeFailureError{Cause: errors.New(e.Reason)}
}

// NegotiationError means the streaming server refused every offer.
type NegotiationError struct {
	Op       string
	Attempts []Attempt
}

func (e *NegotiationError) Error() string {
	parts := make([]string, 0, len(e.Attempts))
	for _, a := range e.Attempts {
		parts = append(parts, fmt.Sprintf("%s at %s (%s)", a.Offer, Shorten(a.URL), Shorten(attemptReason(a))))
	}
	return fmt.Sprintf("%s: the streaming server refused every protocol crisp offered: %s; "+
		"see what it speaks with `crisp probe`, or pick another with --transport/--protocol",
		e.Op, strings.Join(parts, "; "))
}

func attemptReason(a Attempt) string {
	var refused *RefusedError
	if errors.As(a.Err, &refused) {
		return refused.Reason
	}
	if a.Err != nil {
		return a.Err.Error()
	}
	return "accepted"
}

// RemoteExit is an error that carries the remote process's exit status:
// ExitError, client-go's exec.CodeExitError (v4, v5), cmdutil.RemoteStatus.
// It is the one name for "the remote process said how it ended": find it
// with errors.As.
type RemoteExit interface {
	error
	ExitStatus() int
}

// ExitError is the remote process's exit status as reported by protocols
// v1-v3, which carry only an error text: the code the text states, else 1.
// (v4 and v5 report exit codes as client-go's exec.CodeExitError, which
// crisp passes on unchanged.)
type ExitError struct {
	Code    int
	Message string
}

func (e *ExitError) Error() string { return e.Message }

// ExitStatus is the remote exit code.
func (e *ExitError) ExitStatus() int { return e.Code }

// exitCodeInText finds "exit code 7" (containerd), "exit status 7" (Go's
// os/exec), "exit code: 7", "exited with 7".
var exitCodeInText = regexp.MustCompile(`(?i)(?:exit (?:code|status)|exited with(?: code| status)?)\D{0,3}(\d{1,3})\b`)

// ExitCodeFromText is the code a v1-v3 error text states (the last
// mention of an exit code or status, 0-255), else 1: crisp's one reading of
// such texts, for exec and attach as for probe.
func ExitCodeFromText(text string) int {
	m := exitCodeInText.FindAllStringSubmatch(text, -1)
	if len(m) == 0 {
		return 1
	}
	code, err := strconv.Atoi(m[len(m)-1][1])
	if err != nil || code > 255 {
		return 1
	}
	return code
}
