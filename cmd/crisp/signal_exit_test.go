package main

import (
	"github.com/crisp-cri/crisp/internal/cli/cmdutil"

	"context"
	"fmt"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/crisp-cri/crisp/internal/tty"
)

// A signal before streaming starts (while dialing or resolving the
// container) exits 128+N like one during the session, for every command:
// not 125 (exec) or 1 (smoke) for the cancelled call's error.
func TestSignalBeforeStreamingExits128PlusN(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(&tty.SignalError{Signal: sig})
		cancelled := fmt.Errorf("resolving container web: %w", status.Error(codes.Canceled, "context canceled"))
		for _, passThrough := range []bool{true, false} {
			if got := cmdutil.ExitStatus(cmdutil.Signalled(ctx, cancelled), passThrough); got != 128+int(sig) {
				t.Errorf("%s (pass-through %t): exit %d, want %d", sig, passThrough, got, 128+int(sig))
			}
		}
		// A remote status that came first still passes through.
		if got := cmdutil.ExitStatus(cmdutil.Signalled(ctx, cmdutil.RemoteStatus{Code: 3}), true); got != 3 {
			t.Errorf("%s after the remote exited 3: exit %d", sig, got)
		}
	}
	if got := cmdutil.ExitStatus(cmdutil.Signalled(context.Background(), cmdutil.ErrReported), false); got != cmdutil.ExitFailure {
		t.Errorf("no signal: exit %d, want %d", got, cmdutil.ExitFailure)
	}
}
