package session

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/transport/remotecommand"
	"github.com/crisp-cri/crisp/internal/tty"
)

// ReconnectFlags is attach's --reconnect; reattach.go runs the loop.
type ReconnectFlags struct {
	Enabled bool
}

// AddFlags binds --reconnect to fs.
func (o *ReconnectFlags) AddFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Enabled, "reconnect", false, "when the stream breaks while the container runs (the runtime or its streaming server restarted), issue a fresh Attach and carry on")
}

// AttachSession runs one attach session on the URLs of src; upgraded, when
// set, hears that its upgrade was accepted.
type AttachSession func(ctx context.Context, src transport.URLSource, upgraded func()) (remotecommand.Result, error)

// Run runs the attach session once or, with --reconnect, again after every
// break while the container runs. keys (nil without -i) tells a detach.
// exitWait is how long a stream that ended cleanly (most likely with the
// process) gives the runtime to record the exit before it counts as a break.
// inputDone tells whether the client's input has ended (or none is sent): a
// runtime that ends attach streams then (CRI-O) ended it for that, not for a
// break, and a fresh Attach would only end again.
func (o *ReconnectFlags) Run(ctx context.Context, d Deps, cli *client.Client, id string, src transport.URLSource, session AttachSession, keys *tty.DetachReader, exitWait time.Duration, inputDone func() bool) error {
	if !o.Enabled {
		_, err := session(ctx, src, nil)
		return err
	}
	notify := func(format string, args ...any) {
		// A status line that cannot be written has nowhere else to go.
		say(d.Streams.ErrOut, "crisp: attach: "+format, args...)
	}
	var endedCleanly bool // the last session ended without an error
	loop := ReattachLoop{
		Session: func(ctx context.Context, retry bool) (bool, error) {
			var onUpgrade func()
			if retry {
				onUpgrade = func() { notify("re-attached to container %s with a fresh Attach", client.ShortID(id)) }
			}
			res, err := session(ctx, src, onUpgrade)
			endedCleanly = err == nil
			_, upgraded := res.Negotiated()
			return upgraded, err
		},
		Final: func(err error) bool {
			var coded transport.RemoteExit
			var refused *transport.NegotiationError
			return (keys != nil && keys.Detached()) || errors.As(err, &coded) || errors.As(err, &refused) || errors.Is(err, tty.ErrInterrupted)
		},
		Running: func(ctx context.Context) (bool, error) {
			// A broken stream (an error) most likely left the container
			// running: look briefly, to re-attach soon.
			within := 200 * time.Millisecond
			if endedCleanly && inputDone() && endsAttachWithInput(ctx, cli) {
				return false, nil // the stream ended with the input: Attach says the rest
			}
			if endedCleanly {
				within = exitWait
			}
			_, err := cli.WaitForExit(ctx, id, within)
			if errors.Is(err, client.ErrStillRunning) {
				return true, nil
			}
			return false, err
		},
		Notify: notify,
	}
	return loop.Run(ctx)
}
