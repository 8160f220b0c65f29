package probe

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
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
