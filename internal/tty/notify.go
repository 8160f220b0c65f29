package tty

import (
	"context"
	"os"
	"os/signal"
)

// NotifyContext is a context cancelled by SIGINT, SIGTERM, SIGHUP or SIGQUIT with a
// *SignalError as its cause, so that whatever a command was doing when the
// signal came (dialing, resolving, an upgrade, a report), the process can
// exit 128+N as a shell reports it. stop unregisters the handler.
func NotifyContext(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, interruptSignals()...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			cancel(&SignalError{Signal: s})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}
