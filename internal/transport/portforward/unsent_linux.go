package portforward

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// pfUnsent is how many bytes the local socket holds that its client has not
// acknowledged (SIOCOUTQ): closing with a reset throws them away. 0 when it
// cannot tell.
func pfUnsent(c net.Conn) int {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	_ = rc.Control(func(fd uintptr) {
		n, _ = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ)
	})
	return max(n, 0)
}
