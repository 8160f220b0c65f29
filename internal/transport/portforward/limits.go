package portforward

import (
	"errors"
	"fmt"
	"syscall"
)

// pfOutOfFiles tells "this process (or the system) has no file descriptor
// left" from other failures: every forwarded connection needs two (the
// local socket and, over the direct WebSocket protocol, its own connection
// to the runtime), so a busy forward can reach the limit.
func pfOutOfFiles(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// pfLimitHint says which limit was hit and what to do, for a message that
// already carries err; "" when err is not about file descriptors.
func pfLimitHint(err error) string {
	switch {
	case errors.Is(err, syscall.EMFILE):
		limit := "this process's open-files limit"
		if n := pfOpenFilesLimit(); n > 0 {
			limit = fmt.Sprintf("this process's open-files limit (%d)", n)
		}
		return fmt.Sprintf("crisp reached %s: each forwarded connection holds about two file descriptors; close idle connections or raise the limit (ulimit -n) before starting crisp", limit)
	case errors.Is(err, syscall.ENFILE):
		return "the system's table of open files is full (fs.file-max): close connections or raise it"
	}
	return ""
}
