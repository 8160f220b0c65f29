package probe

import (
	"time"
)

// slowAttempt is how long an attempt runs before progress says it is
// still waiting: long enough that a healthy runtime never shows it.
const slowAttempt = 2 * time.Second

// waiting tells p.Progress, once the attempt has run slowAttempt, which
// attempt is still waiting and for how long it may; stop ends the watch.
func (p *Prober) waiting(call Call, proto Protocol) (stop func()) {
	if p.Progress == nil {
		return func() {}
	}
	limit, after := p.timeout(), p.SlowAfter
	if after <= 0 {
		after = slowAttempt
	}
	t := time.AfterFunc(after, func() {
		p.Progress("%s over %s: still waiting after %s (an attempt may take up to %s)", call, proto, after, limit)
	})
	return func() { t.Stop() }
}
