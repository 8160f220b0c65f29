package streamserver

import (
	"sync"
	"time"
)

// FaultRestartStreamServerAfter restarts the streaming server DURATION after
// its first Start: every connection is cut (as kill-stream-server-after
// does), then it listens again on the same address at once. Containers and
// their attach sessions live in the backend, so they carry on: the conmon-rs
// model, where the per-container monitor outlives the runtime's server. A
// client that re-attaches sees the output that follows.
const FaultRestartStreamServerAfter = "restart-stream-server-after"

// restartOnce arms the restart fault at the first Start only.
type restartOnce struct {
	once sync.Once
}

// armRestart schedules the restart of generation g when the fault asks for
// one; s.mu is held (Start).
func (s *server) armRestart(g *generation) {
	d := s.faults.restartAfter
	if d < 0 {
		return
	}
	s.restart.once.Do(func() {
		time.AfterFunc(d, func() {
			s.mu.Lock()
			current := s.current == g
			s.mu.Unlock()
			if !current {
				return // stopped (or closed) meanwhile: nothing to restart
			}
			s.stopGeneration(g)
			// An error is Start after Close: the server is gone for good.
			_ = s.Start()
		})
	})
}
