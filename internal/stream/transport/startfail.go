package transport

import (
	"regexp"
	"strings"
)

// Exit statuses of a command the runtime could not start, as docker and
// a shell report them.
const (
	ExitNotFound      = 127 // no such command
	ExitNotExecutable = 126 // found, but it cannot be executed
)

// startFailures reads the runtime's reason for a command that never
// started. runc (containerd, CRI-O) says `exec: "x": executable file not
// found in $PATH`, `exec: "/x": stat /x: no such file or directory` or
// `exec: "/etc/passwd": permission denied`; crisp's mock says "not an
// executable file". Each pattern needs the word exec nearby, so that an
// unrelated "permission denied" (a socket, a certificate) never counts.
var startFailures = []struct {
	re   *regexp.Regexp
	code int
}{
	{regexp.MustCompile(`(?i)exec.*(executable file not found|no such file or directory)`), ExitNotFound},
	{regexp.MustCompile(`(?i)exec.*(permission denied|not an executable file|exec format error|is a directory)`), ExitNotExecutable},
}

// StartFailure reads an error text from the runtime: when it says the
// command could not be started, it returns the exit status (127: not
// found, 126: not executable) and the runtime's reason, trimmed of the
// API's wrapping.
func StartFailure(text string) (*ExitError, bool) {
	for _, f := range startFailures {
		if f.re.MatchString(text) {
			reason := strings.TrimSpace(text)
			for _, prefix := range []string{"error executing remote command: ", "Internal error occurred: "} {
				reason = strings.TrimPrefix(reason, prefix)
			}
			return &ExitError{Code: f.code, Message: Shorten(reason)}, true
		}
	}
	return nil, false
}
