package transport

import (
	"context"
	"fmt"
	"time"
)

// UpgradeTimeoutError is an upgrade the streaming server did not answer in
// time: it took the connection and said nothing. It is neither a refusal
// (the server may well speak the protocol) nor a fallback reason; errors.Is
// matches it with context.DeadlineExceeded.
type UpgradeTimeoutError struct {
	Op    string
	Offer Offer
	URL   string
	// After is how long crisp waited.
	After time.Duration
	// Hint says how to wait longer (empty: nothing to say).
	Hint string
}

func (e *UpgradeTimeoutError) Error() string {
	msg := fmt.Sprintf("%s: the runtime's streaming server at %s took the connection but did not answer the %s upgrade within %s; is it overloaded or stuck?",
		e.Op, Shorten(e.URL), e.Offer, e.After.Round(time.Millisecond))
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// Timeout reports true, as net.Error's do.
func (e *UpgradeTimeoutError) Timeout() bool { return true }

// Is makes errors.Is(err, context.DeadlineExceeded) true.
func (e *UpgradeTimeoutError) Is(target error) bool { return target == context.DeadlineExceeded }
