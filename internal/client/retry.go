package client

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// DefaultMaxRetries is crictl's --max-retries default.
const DefaultMaxRetries = 3

// Backoff between connection attempts, crictl's: 500ms, doubled each
// time, at most 5s.
const (
	retryFirstDelay = 500 * time.Millisecond
	retryMaxDelay   = 5 * time.Second
)

// retryInterceptor gives crictl's --max-retries its meaning: a call that
// cannot reach the endpoint (Unavailable before any call got through) is
// tried again up to maxRetries times (negative: until the call's deadline),
// with crictl's backoff. crictl retries the connection it makes before its
// first call; crisp connects lazily, so the first calls stand in for it.
// Once a call got an answer, the endpoint has been reached and an
// Unavailable is the runtime's own: not retried, as a request that reached
// the runtime must not be sent twice. Each attempt is said on debugOut
// (-D), when set.
func retryInterceptor(endpoint string, maxRetries int, debugOut io.Writer) grpc.UnaryClientInterceptor {
	var reached atomic.Bool
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		err := invoker(ctx, method, req, reply, cc, opts...)
		delay := retryFirstDelay
		for attempt := 1; unreached(err, &reached) && (maxRetries < 0 || attempt <= maxRetries); attempt++ {
			if debugOut != nil {
				limit := fmt.Sprintf("/%d", maxRetries)
				if maxRetries < 0 {
					limit = ""
				}
				_, _ = fmt.Fprintf(debugOut, "connection attempt %d%s to %s failed: %v; retrying in %s\n", attempt, limit, endpoint, status.Convert(err).Message(), delay) // debug output: a failed write has nowhere to go
			}
			timer := time.NewTimer(delay)
			select {
			case <-ctx.Done():
				timer.Stop()
				return err
			case <-timer.C:
			}
			cc.ResetConnectBackoff() // dial now, not after gRPC's own backoff
			err = invoker(ctx, method, req, reply, cc, opts...)
			delay = min(delay*2, retryMaxDelay)
		}
		if status.Code(err) != codes.Unavailable {
			reached.Store(true)
		}
		return err
	}
}

// unreached says whether err means the endpoint could not be reached yet,
// no call having got through before: a socket not there yet, or nothing
// listening on it yet (a runtime starting). What is no socket, or a socket
// crisp may not open, stays so: not retried.
func unreached(err error, reached *atomic.Bool) bool {
	if status.Code(err) != codes.Unavailable || reached.Load() {
		return false
	}
	msg := status.Convert(err).Message()
	return !strings.Contains(msg, notASocket) && !strings.Contains(msg, "permission denied")
}
