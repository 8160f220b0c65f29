package portforward

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/crisp-cri/crisp/internal/transport"
)

// upgradeBound bounds one handshake (dial and upgrade, not the session that
// follows) by cfg.UpgradeTimeout, as exec does: a streaming server that takes
// the connection and never answers would otherwise hold crisp forever.
type upgradeBound struct {
	timeout  time.Duration
	deadline time.Time
}

// boundUpgrade returns the handshake's context and its bound; call done when
// the handshake is over, whatever its outcome.
func boundUpgrade(ctx context.Context, cfg transport.Config) (context.Context, *upgradeBound, func()) {
	b := &upgradeBound{timeout: cfg.UpgradeTimeout}
	if b.timeout <= 0 {
		return ctx, b, func() {}
	}
	// A deadline, not just a cancellation: gorilla's handshake honours only
	// the context's deadline once connected.
	hctx, cancel := context.WithTimeoutCause(ctx, b.timeout, ErrUpgradeTimeout)
	b.deadline, _ = hctx.Deadline()
	return hctx, b, cancel
}

// err turns a handshake failure caused by the bound into one that says what
// timed out and what to do; other errors pass unchanged.
func (b *upgradeBound) err(parent context.Context, offer transport.Offer, rawURL string, err error) error {
	if err == nil || parent.Err() != nil || !b.expired() {
		return err
	}
	return fmt.Errorf("port-forward: the runtime's streaming server at %s did not answer the %s upgrade within %s; is it overloaded or stuck? (raise --request-timeout to wait longer): %w",
		rawURL, pfOfferName(offer), b.timeout, ErrUpgradeTimeout)
}

// expired reports whether the bound has passed. (The connection's own
// deadline, set from the context's, can fire a moment before the context is
// marked done: the clock decides.)
func (b *upgradeBound) expired() bool {
	return !b.deadline.IsZero() && !time.Now().Before(b.deadline)
}

// ErrUpgradeTimeout marks a handshake that the streaming server left
// unanswered past the request timeout.
var ErrUpgradeTimeout = errors.New("upgrade timed out")
