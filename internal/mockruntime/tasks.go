package mockruntime

import (
	"sync"
	"syscall"
)

// pauseTask is the "process" of a pause-like image's container: it waits
// for a terminating signal, as the pause binary does (exit 0 on SIGTERM or
// SIGINT, which it handles; 128+9 on SIGKILL).
type pauseTask struct {
	once     sync.Once
	done     chan struct{}
	exitCode int // valid after done
}

func newPauseTask() *pauseTask { return &pauseTask{done: make(chan struct{})} }

func (p *pauseTask) signal(sig syscall.Signal) {
	code := 0
	switch sig {
	case syscall.SIGTERM, syscall.SIGINT:
	case syscall.SIGKILL:
		code = 128 + int(sig)
	default:
		return
	}
	p.once.Do(func() {
		p.exitCode = code
		close(p.done)
	})
}
