//go:build !linux

package liveness

import (
	"net"
	"time"
)

// setUserTimeout does nothing where TCP_USER_TIMEOUT is Linux's: the pings
// still bound the wait.
func setUserTimeout(net.Conn, time.Duration) error { return nil }
