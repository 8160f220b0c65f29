// This file keeps an attach going across a restart of the runtime or
// its streaming server (attach --reconnect): when a session breaks off while
// the container still runs, it issues a fresh Attach (the caller's session
// function does) and carries on, saying so. It knows neither CRI nor
// protocols: the caller says what a session is, whether the container runs,
// and which errors are final.

package session

import (
	"context"
	"errors"
	"time"
)

// Defaults for ReattachLoop's zero fields.
const (
	DefaultWindow     = 60 * time.Second
	DefaultMinBackoff = 100 * time.Millisecond
	DefaultMaxBackoff = 2 * time.Second
)

// ReattachLoop runs attach sessions until one ends for good.
type ReattachLoop struct {
	// Session runs one attach session (a fresh Attach call each time; retry
	// is false for the first). It reports whether the stream was upgraded,
	// and the session's error.
	Session func(ctx context.Context, retry bool) (upgraded bool, err error)
	// Final reports errors that end the attach whatever the container does:
	// the process's exit status, the user's detach or interrupt, a refusal of
	// every protocol. A nil error is not final (the stream may have ended
	// because the server went away).
	Final func(err error) bool
	// Running reports whether the container still runs; an error (the
	// runtime restarting) counts as "maybe": the loop tries again.
	Running func(ctx context.Context) (bool, error)
	// Notify tells the user what happens (one line, no newline).
	Notify func(format string, args ...any)
	// Window bounds how long the loop keeps trying without a session that
	// upgrades; zero means DefaultWindow.
	Window time.Duration
	// MinBackoff and MaxBackoff bound the waits between tries.
	MinBackoff, MaxBackoff time.Duration
}

// ErrGaveUp wraps the last error when the window passed without a session.
var ErrGaveUp = errors.New("attach --reconnect: gave up re-attaching")

// Run runs sessions until one ends for good and returns its error: the
// first session's or a later one's, nil when the stream ended and the
// container no longer runs (its exit status is the caller's to find).
func (l ReattachLoop) Run(ctx context.Context) error {
	window := orDefault(l.Window, DefaultWindow)
	backoff := orDefault(l.MinBackoff, DefaultMinBackoff)
	maxBackoff := orDefault(l.MaxBackoff, DefaultMaxBackoff)
	var brokeAt time.Time  // zero while the last session upgraded
	var lastFailure string // why the last fresh Attach failed, said once
	for retry := false; ; retry = true {
		upgraded, err := l.Session(ctx, retry)
		if ctx.Err() != nil || l.Final(err) {
			return err
		}
		if upgraded {
			brokeAt = time.Time{}
			backoff = orDefault(l.MinBackoff, DefaultMinBackoff)
		}
		running, rerr := l.Running(ctx)
		if rerr == nil && !running {
			return err // the container ended: the stream's end was its end
		}
		now := time.Now()
		if brokeAt.IsZero() {
			brokeAt = now
			l.notify("the attach stream ended while the container runs (%s); issuing a fresh Attach", describe(err))
		} else if now.Sub(brokeAt) > window {
			if err == nil {
				err = rerr
			}
			return errors.Join(ErrGaveUp, err)
		}
		if !upgraded { // the server is still away: wait before the next try
			if why := describe(err); retry && why != lastFailure {
				lastFailure = why
				l.notify("the fresh Attach did not connect (%s); trying again for up to %s", why, window.Round(time.Second))
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, maxBackoff)
		}
	}
}

func (l ReattachLoop) notify(format string, args ...any) {
	if l.Notify != nil {
		l.Notify(format, args...)
	}
}

func describe(err error) string {
	if err == nil {
		return "the server closed it"
	}
	return err.Error()
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
