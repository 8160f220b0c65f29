package cmdutil

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/transport"
)

// PeerFlags is --peer-timeout, shared by exec, attach and port-forward: how
// long a session's runtime may give no sign of life (nothing received,
// pings unanswered, what crisp sent unacknowledged) before crisp ends the
// session (transport/liveness). 0 waits for good.
type PeerFlags struct {
	Timeout Seconds
}

// AddFlags binds --peer-timeout to fs (transport.DefaultPeerTimeout).
func (o *PeerFlags) AddFlags(fs *pflag.FlagSet) {
	o.Timeout = Seconds(transport.DefaultPeerTimeout)
	fs.Var(&o.Timeout, "peer-timeout", "end the session when the runtime's streaming server gives no sign of life (no byte, no answer to a ping) for this long, in seconds (60) or a duration (1m); 0: wait for good")
}

// Validate rejects a negative --peer-timeout.
func (o *PeerFlags) Validate() error {
	if o.Timeout < 0 {
		return UsageErrorf("--peer-timeout must not be negative (0 waits for good)")
	}
	return nil
}

// Apply sets cfg's liveness bound; 0 turns it off.
func (o *PeerFlags) Apply(cfg *transport.Config) error {
	cfg.PeerTimeout = time.Duration(o.Timeout)
	if cfg.PeerTimeout == 0 {
		cfg.PeerTimeout = -1 // transport.Config's "no bound"
	}
	return nil
}

// Configure runs every step on cfg in turn, stopping at the first error:
// a command's flag groups each set their part of the transport
// configuration (TraceFlags.Apply, PeerFlags.Apply).
func Configure(steps ...func(*transport.Config) error) func(*transport.Config) error {
	return func(cfg *transport.Config) error {
		for _, step := range steps {
			if err := step(cfg); err != nil {
				return err
			}
		}
		return nil
	}
}
