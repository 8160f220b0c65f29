package transport

import (
	"regexp"
	"strconv"
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

// ExitRuncExecFailed is runc's exit status when `runc exec` itself fails
// (since runc 1.1; crun follows), the command never having started.
const ExitRuncExecFailed = 255

// runcExecFailed finds runc's own line about a failed exec: plain
// ("exec failed: unable to start container process: exec: ..."), as its
// logrus line (time=... level=error msg="exec failed: ..."), or as logrus
// writes it to a terminal (ERRO[0000] exec failed: ..., coloured).
var runcExecFailed = regexp.MustCompile(`(?i)(?:^|msg="|^ERRO\[\d+\]\s+)(?:runc )?exec failed: .*`)

// ansiColour is a terminal colour sequence, as logrus puts around ERRO.
var ansiColour = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// ExecFailure reads an exec's exit status together with the end of what
// it wrote to its error stream (its output stream with a TTY). CRI-O runs
// `runc exec` for every exec and passes runc's status and error text
// through as the command's: a command that could not start exits 255 with
// runc's reason on stderr, where containerd answers an error the
// transport maps to 127 or 126 (StartFailure). ExecFailure maps CRI-O's
// answer the same way; any other status, or 255 without runc's line as
// the last one written, is the command's own.
func ExecFailure(code int, tail []byte) (*ExitError, bool) {
	if code != ExitRuncExecFailed {
		return nil, false
	}
	lines := strings.Split(strings.TrimRight(string(tail), "\r\n"), "\n")
	last := strings.TrimSpace(ansiColour.ReplaceAllString(lines[len(lines)-1], ""))
	m := runcExecFailed.FindString(last)
	if m == "" {
		return nil, false
	}
	reason := m[strings.Index(strings.ToLower(m), "exec failed: "):] // the prefix matched is ASCII
	if q, err := strconv.Unquote(`"` + strings.TrimSuffix(reason, `"`) + `"`); err == nil {
		reason = q
	}
	e, ok := StartFailure(reason)
	if !ok {
		return nil, false
	}
	e.Message = Shorten(reason)
	return e, true
}
