package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

var errFinal = errors.New("exit status 3")

type script struct {
	steps    []step // one per session
	sessions int
	retries  []bool
	notes    []string
}

type step struct {
	upgraded bool
	err      error
	running  bool
}

func (s *script) loop() ReattachLoop {
	return ReattachLoop{
		Session: func(_ context.Context, retry bool) (bool, error) {
			st := s.steps[s.sessions]
			s.sessions++
			s.retries = append(s.retries, retry)
			return st.upgraded, st.err
		},
		Final:      func(err error) bool { return errors.Is(err, errFinal) },
		Running:    func(context.Context) (bool, error) { return s.steps[s.sessions-1].running, nil },
		Notify:     func(format string, args ...any) { s.notes = append(s.notes, fmt.Sprintf(format, args...)) },
		MinBackoff: time.Microsecond, MaxBackoff: time.Microsecond,
	}
}

func TestReattachesUntilFinal(t *testing.T) {
	broke := errors.New("broke off")
	s := &script{steps: []step{
		{upgraded: true, err: broke, running: true},                             // the server restarts
		{upgraded: false, err: errors.New("connection refused"), running: true}, // still away
		{upgraded: true, err: errFinal},                                         // back; the process exits 3
	}}
	err := s.loop().Run(context.Background())
	if !errors.Is(err, errFinal) {
		t.Fatalf("Run = %v, want the final session's error", err)
	}
	if s.sessions != 3 || s.retries[0] || !s.retries[1] || !s.retries[2] {
		t.Errorf("sessions %d, retries %v", s.sessions, s.retries)
	}
	if len(s.notes) != 2 || !strings.Contains(s.notes[0], "broke off") || !strings.Contains(s.notes[1], "did not connect (connection refused)") {
		t.Errorf("notes %q: want a line naming the break, then one naming why the fresh Attach failed", s.notes)
	}
}

// A server that stays away is said once per reason, not once per try.
func TestSaysEachRetryFailureOnce(t *testing.T) {
	steps := []step{{upgraded: true, err: errors.New("broke off"), running: true}}
	for range 5 {
		steps = append(steps, step{err: errors.New("connection refused"), running: true})
	}
	steps = append(steps, step{err: errors.New("upgrade refused: 404"), running: true}, step{upgraded: true, err: errFinal})
	s := &script{steps: steps}
	if err := s.loop().Run(context.Background()); !errors.Is(err, errFinal) {
		t.Fatalf("Run = %v, want the final session's error", err)
	}
	if len(s.notes) != 3 || !strings.Contains(s.notes[1], "connection refused") || !strings.Contains(s.notes[2], "404") {
		t.Errorf("notes %q: want the break, then each distinct failure once", s.notes)
	}
}

func TestStopsWhenContainerEnded(t *testing.T) {
	s := &script{steps: []step{{upgraded: true, err: nil, running: false}}}
	if err := s.loop().Run(context.Background()); err != nil || s.sessions != 1 {
		t.Errorf("Run = %v after %d sessions, want nil after 1", err, s.sessions)
	}
}

func TestGivesUpAfterWindow(t *testing.T) {
	steps := make([]step, 1000)
	for i := range steps {
		steps[i] = step{err: errors.New("connection refused"), running: true}
	}
	s := &script{steps: steps}
	l := s.loop()
	l.Window = time.Millisecond
	l.MinBackoff, l.MaxBackoff = time.Millisecond, time.Millisecond
	err := l.Run(context.Background())
	if !errors.Is(err, ErrGaveUp) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("Run = %v, want ErrGaveUp with the last error", err)
	}
}
