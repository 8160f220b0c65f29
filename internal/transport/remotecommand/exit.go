package remotecommand

import (
	"errors"
	"strings"

	"github.com/crisp-cri/crisp/internal/transport"
)

// exitStatusError is any error carrying a remote exit code.
type exitStatusError interface {
	error
	ExitStatus() int
}

// remoteExit returns err as a remote exit status, or nil when err is not one.
// A command the runtime could not start gets 127 (not found) or 126 (not
// executable), with the runtime's reason (transport.StartFailure).
// On the protocols before v4, which carry only an error text, the code is
// what the text states (transport.ExitCodeFromText).
func remoteExit(spec protocolSpec, err error) exitStatusError {
	var coded exitStatusError
	if errors.As(err, &coded) {
		return coded
	}
	// A command the runtime could not start: 127 or 126, as docker says.
	if e, ok := transport.StartFailure(err.Error()); ok {
		return e
	}
	if !spec.exitInText() {
		return nil
	}
	msg := err.Error()
	const prefix = "error executing remote command: "
	if !strings.HasPrefix(strings.ToLower(msg), prefix) {
		return nil
	}
	text := strings.TrimSpace(msg[len(prefix):])
	return &transport.ExitError{Code: transport.ExitCodeFromText(text), Message: text}
}
