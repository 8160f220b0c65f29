//go:build unix

package portforward

import "syscall"

// pfOpenFilesLimit is the soft RLIMIT_NOFILE, 0 if unknown.
func pfOpenFilesLimit() uint64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return rl.Cur
}
