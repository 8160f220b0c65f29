package streamserver

import (
	"sync"
	"time"
)

// FaultRestartStreamServerAfter restarts the streaming server DURATION after
// the first streaming session reached it (timed from the session, not from
// Start: on a loaded machine a client may take longer than DURATION to
// arrive, and would then meet only the restarted server): every connection
// is cut (as kill-stream-server-after
// does), then it listens again on the same address at once. Containers and
// their attach sessions live in the backend, so they carry on: the conmon-rs
// model, where the per-container monitor outlives the runtime's server. A
// client that re-attaches sees the output that follows.
const FaultRestartStreamServerAfter = "restart-stream-server-after"

// restartOnce arms the restart fault at the first session only.
type restartOnce struct {
	once sync.Once
}

// armRestart schedules the restart of the serving generation when the fault
// asks for one (ServeHTTP, as a session begins).
func (s *server) armRestart() {
	d := s.faults.restartAfter
	if d < 0 {
		return
	}
	s.restart.once.Do(func() {
		s.mu.Lock()
		g := s.current
		s.mu.Unlock()
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
