// Package tty owns crisp's local terminal for interactive sessions (exec -t, attach -t): whether the
// streams are terminals, raw mode with a guaranteed restore (Terminal.Safe), the terminal size and
// its changes (Terminal.MonitorSize, shaped like client-go's remotecommand.TerminalSizeQueue), and
// docker-style detach keys (ParseDetachKeys, NewDetachReader).
//
// It knows terminals, not protocols: it must not import client-go, gRPC or anything about CRI. The
// exec and attach code adapts its types (TerminalSize to remotecommand.TerminalSize) at the call site.
// It is the one package besides cmd/crisp that installs signal handlers: SIGINT, SIGTERM, SIGHUP and
// SIGQUIT for the whole command (NotifyContext: exit 128+N) and while a terminal is raw (so the
// terminal is restored before crisp goes away), and SIGWINCH while a size monitor runs.
//
// Typical use by a command:
//
//	t := tty.Terminal{In: o.In, Out: o.Out}
//	if o.TTY && !t.IsTerminalIn() {
//		fmt.Fprintln(o.ErrOut, tty.NoTTYWarning)
//		o.TTY = false // carry on without a TTY, as kubectl does
//	}
//	err := t.Safe(ctx, func(ctx context.Context) error {
//		ctx, cancel := context.WithCancel(ctx)
//		defer cancel() // ends the size queue, so client-go's resize goroutine returns
//		sizes := t.MonitorSize(ctx)
//		return stream(ctx, sizes) // adapt sizes.Next() to remotecommand.TerminalSizeQueue
//	})
//	if errors.Is(err, tty.ErrInterrupted) { ... } // SIGINT/SIGTERM/SIGHUP: terminal already restored
package tty
