package client

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestCallerDeadlineAnsweredEarly: the runtime enforces the caller's
// deadline too (gRPC sends it along) and may answer DeadlineExceeded a
// moment before the caller's own timer fires. The call still ended on the
// caller's deadline (a command's --timeout), not on --request-timeout.
// Run with -count=200: it failed now and then when the answer beat the
// timer.
func TestCallerDeadlineAnsweredEarly(t *testing.T) {
	c := &Client{Endpoint: "unix:///run/r.sock", Timeout: 10 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	outer, _ := ctx.Deadline()
	err := c.Call(ctx, "listing pods", func(context.Context) error {
		// The runtime's answer, a millisecond before the caller's timer.
		time.Sleep(time.Until(outer.Add(-time.Millisecond)))
		return status.Error(codes.DeadlineExceeded, "context deadline exceeded")
	})
	if !errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "--request-timeout") || !strings.HasPrefix(err.Error(), "listing pods: ") {
		t.Fatalf("err = %v; want 'listing pods: ' and the caller's context.DeadlineExceeded, no --request-timeout", err)
	}
}

// TestEarliestDeadlineWins: with both deadlines reached when the answer
// comes, the one that came first ended the call; a DeadlineExceeded far
// from either is the runtime's own, reported as before.
func TestEarliestDeadlineWins(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name             string
		caller, request  time.Duration // from now; 0: none
		callerHasExpired bool
		want             bool // the caller's deadline ended the call
	}{
		{name: "caller's reached, request far", caller: -time.Millisecond, request: 10 * time.Second, want: true},
		{name: "caller's about to, request far", caller: time.Millisecond, request: 10 * time.Second, want: true},
		{name: "request's first, both reached", caller: -time.Millisecond, request: -2 * time.Millisecond, callerHasExpired: true, want: false},
		{name: "caller's first, both reached", caller: -2 * time.Millisecond, request: -time.Millisecond, want: true},
		{name: "request's reached, caller far", caller: time.Hour, request: -time.Millisecond, want: false},
		{name: "neither near", caller: time.Hour, request: 10 * time.Second, want: false},
		{name: "caller has none", request: -time.Millisecond, want: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.caller != 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, now.Add(tc.caller))
				defer cancel()
				if tc.callerHasExpired {
					<-ctx.Done()
				}
			}
			var request time.Time
			if tc.request != 0 {
				request = now.Add(tc.request)
			}
			if got := callerDeadlineEnded(ctx, request, now); got != tc.want {
				t.Errorf("callerDeadlineEnded = %v, want %v", got, tc.want)
			}
		})
	}
}
