package client

import (
	"context"
	"time"
)

// deadlineSlack is how close to a deadline an answer may come and still
// count as ended by it. gRPC sends the call's deadline to the runtime, which
// enforces it on its own clock: its DeadlineExceeded can arrive a moment
// before the caller's timer fires (on a loaded machine, milliseconds), while
// the caller's context still reports no error.
const deadlineSlack = 50 * time.Millisecond

// DeadlineReached reports whether ctx's deadline has passed at now or is
// within a moment of it: a call that failed then ended on that deadline,
// whether or not ctx's timer has fired yet.
func DeadlineReached(ctx context.Context, now time.Time) bool {
	if ctx.Err() == context.DeadlineExceeded {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !d.After(now.Add(deadlineSlack))
}

// callerDeadlineEnded decides from the deadlines themselves whose ended a
// call that failed at now: the caller's (ctx's, a command's --timeout) or
// the request timeout's (request; zero for none). The earliest deadline
// that has passed or is about to wins; which context reported first says
// nothing (the runtime's answer can beat both timers).
func callerDeadlineEnded(ctx context.Context, request, now time.Time) bool {
	if !DeadlineReached(ctx, now) {
		return false
	}
	caller, ok := ctx.Deadline()
	return !ok || request.IsZero() || !caller.After(request)
}
