package fleet

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// slowLogs is an API whose log reads wait for one another: the first read
// returns once a second one is under way, or after a while alone.
type slowLogs struct {
	API
	mu        sync.Mutex
	inFlight  int
	maxFlight int
	second    chan struct{}
	once      sync.Once
}

func (s *slowLogs) PodLog(ctx context.Context, ns, pod, ctr string, limit int64) ([]byte, error) {
	s.mu.Lock()
	s.inFlight++
	s.maxFlight = max(s.maxFlight, s.inFlight)
	if s.inFlight >= 2 {
		s.once.Do(func() { close(s.second) })
	}
	s.mu.Unlock()
	select {
	case <-s.second:
	case <-time.After(5 * time.Second): // read one at a time: the test fails
	}
	defer func() { s.mu.Lock(); s.inFlight--; s.mu.Unlock() }()
	return s.API.PodLog(ctx, ns, pod, ctr, limit)
}

// The logs of nodes that end together are read side by side, no more than
// logReaders at once: one after another, a thousand reads through the API
// server were tens of seconds of a run.
func TestLogsReadSideBySide(t *testing.T) {
	names := make([]string, 3*logReaders)
	for i := range names {
		names[i] = fmt.Sprintf("node-%02d", i)
	}
	api := newFake(names...)
	for _, n := range names {
		api.script[n] = finishes(0)
		api.logs[n] = smokeJSON(n, "pass")
	}
	slow := &slowLogs{API: api, second: make(chan struct{})}
	r, progress := runner(slow, time.Minute)
	fl, err := r.Run(context.Background())
	if err != nil || fl.Check() != nil || len(fl.Runs) != len(names) {
		t.Fatalf("fleet: %v, %d runs; progress:\n%s", err, len(fl.Runs), progress)
	}
	if slow.maxFlight < 2 || slow.maxFlight > logReaders {
		t.Errorf("at most %d logs were read at once; want 2 to %d", slow.maxFlight, logReaders)
	}
}
