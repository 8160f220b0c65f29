package probe

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
)

// TestUnfinishedAtTheDeadlineBeforeItsTimer: a CRI call that ended on
// smoke's --timeout (client.Call says so with context.DeadlineExceeded) is
// worded as the timeout even when smoke's own timer has not fired yet (the
// runtime's answer came first).
func TestUnfinishedAtTheDeadlineBeforeItsTimer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	deadline, _ := ctx.Deadline()
	early, cancelEarly := context.WithDeadline(context.Background(), time.Now().Add(time.Millisecond))
	defer cancelEarly()
	err := fmt.Errorf("listing pods: %w", context.DeadlineExceeded)
	if got := (*SmokeReport)(nil).Unfinished(early, err, 30*time.Millisecond).Error(); !strings.Contains(got, "did not finish within --timeout 30ms") {
		t.Errorf("at the deadline: %q, want it to name --timeout 30ms", got)
	}
	if got := (*SmokeReport)(nil).Unfinished(ctx, err, time.Until(deadline)).Error(); strings.Contains(got, "--timeout") {
		t.Errorf("an hour before the deadline: %q, want the error as it was (not smoke's timeout)", got)
	}
}

// deadlineEarly is a runtime that enforces the deadline it was sent on its
// own clock: every CRI call fails with DeadlineExceeded while the caller's
// timer has not fired yet.
type deadlineEarly struct{ *fakeRuntime }

func (deadlineEarly) Exec(context.Context, *runtimeapi.ExecRequest) (string, error) {
	return "", status.Error(codes.DeadlineExceeded, "context deadline exceeded")
}

func (deadlineEarly) Attach(context.Context, *runtimeapi.AttachRequest) (string, error) {
	return "", status.Error(codes.DeadlineExceeded, "context deadline exceeded")
}

func (deadlineEarly) PortForward(context.Context, *runtimeapi.PortForwardRequest) (string, error) {
	return "", status.Error(codes.DeadlineExceeded, "context deadline exceeded")
}

// Handshakes the runtime ended at smoke's deadline, a moment before its
// timer fired, end the run as the timeout's, not as a report that the
// runtime accepted no protocol (the first make test of a clean clone met it).
func TestHandshakesEndedByTheDeadlineEndTheRun(t *testing.T) {
	f := deadlineEarly{fakeProfile(t, string(streamserver.ProfileFull))}
	for name, run := range map[string]func(context.Context) error{
		"smoke": func(ctx context.Context) error {
			_, err := (&Smoker{URLs: f, Streamer: f, Timeout: 5 * time.Second}).Run(ctx, Target{ContainerID: "c1", PodID: "p1", Port: f.echoPort})
			return err
		},
		"probe": func(ctx context.Context) error {
			_, err := (&Prober{URLs: f, Streamer: f, Timeout: 5 * time.Second}).Run(ctx, Target{ContainerID: "c1", PodID: "p1", Port: f.echoPort})
			return err
		},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond) // within the slack: already "reached"
		err := run(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: %v, want the run ended by its deadline", name, err)
		} else if got := (*SmokeReport)(nil).Unfinished(ctx, err, 20*time.Millisecond).Error(); !strings.Contains(got, "did not finish within --timeout 20ms") {
			t.Errorf("%s: %q, want it to name the timeout", name, got)
		}
		cancel()
	}
}
