package remotecommand

import (
	"fmt"
	"strings"
	"time"

	"github.com/crisp-cri/crisp/internal/base/startup"
)

// timing is where one Stream spent its time, for -v: what came before the
// first Exec/Attach call (start-up, gRPC dial, finding the container), each
// refused attempt, and the accepted one's RPC, upgrade and session (streams
// until the exit status is read). Start-up is package initialisation, from
// internal/base/startup's mark to main.
type timing struct {
	begin    time.Time // Stream called
	accepted time.Time // the upgrade that was accepted
}

// logTiming writes the breakdown through -v's log once the session is
// over; res is read when the deferred call runs, hence the pointer.
func (s *session) logTiming(res *Result) {
	if s.cfg.Logf == nil {
		return
	}
	end := time.Now()
	s.mu.Lock()
	t := s.timing
	s.mu.Unlock()
	op := s.op
	var b strings.Builder
	fmt.Fprintf(&b, "%s: timing: start-up %s, gRPC dial and lookup %s", op, ms(startup.Main().Sub(startup.Began)), ms(t.begin.Sub(startup.Main())))
	for _, a := range res.Attempts {
		if !a.Accepted() {
			fmt.Fprintf(&b, "; refused %s: RPC %s, upgrade %s", a.Offer, ms(a.RPC), ms(a.Upgrade))
			continue
		}
		fmt.Fprintf(&b, "; %s RPC %s, upgrade %s", a.Transport.Title(), ms(a.RPC), ms(a.Upgrade))
		if !t.accepted.IsZero() {
			fmt.Fprintf(&b, ", session and exit status %s", ms(end.Sub(t.accepted)))
		}
	}
	fmt.Fprintf(&b, "; total %s", ms(end.Sub(startup.Began)))
	s.cfg.Log("%s", b.String())
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
}
