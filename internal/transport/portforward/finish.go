package portforward

import (
	"fmt"
	"net"
	"sync/atomic"
	"time"
)

// The direct WebSocket protocol cannot tell the remote side that the local
// one has finished sending, so a connection whose local side finished is
// closed by crisp once the remote side seems done. Closing too early cuts
// the remote side's answer, and the local client must never take such a cut
// for the answer's end. The rule:
//
//  1. The idle clock starts only once the server has everything crisp sent:
//     a ping written after the last data comes back as a pong once the
//     server has handed all of it to the remote port (under load that took
//     seconds; closing a fixed 2s after the local side finished lost whole
//     answers, with clean ends).
//  2. Then the connection closes once the remote side has sent nothing for
//     FinishedIdle and the local client has taken all crisp passed on (a
//     write blocked on a client that reads slowly is not idleness, and a
//     reset throws away what the local socket has not sent yet: under load
//     that cut answers that had all arrived). crisp cannot know that the remote side had finished (it
//     never learnt that the local one had: under load an answer paused for
//     seconds mid-way), so this close is a reset on the local side, never a
//     clean end: a client that has what it wanted ignores it, one whose
//     answer was cut sees an error (-v says why).
//  3. A connection closed before any answer came (nothing from the remote
//     side at all), whose server never confirmed it had the data within
//     pfFlushWait, or whose local client took nothing of what crisp still
//     had for it for StallTimeout, has likely lost data: it is also reported.
//
// A remote side that closes first ends the connection cleanly, as ever.

// pfFlushWait bounds the wait for the server to confirm it has what crisp
// sent (rule 1).
const pfFlushWait = 30 * time.Second

// pfFlusher is a forwarded connection whose server can confirm it has what
// was written (wsPort).
type pfFlusher interface {
	flushed() (<-chan struct{}, error)
}

// finishWithoutHalfClose applies the rule above once the local side of
// local finished sending over a protocol without half-close. It returns
// when done is closed (the remote side ended first: reset "") or the
// connection should close with a reset (reset says why; err too when data
// was likely lost, for the report).
func (f *Forwarder) finishWithoutHalfClose(local net.Conn, fc ForwardConn, act *pfActivity, remoteBytes *atomic.Int64, done <-chan struct{}) (reset string, err error) {
	who := local.RemoteAddr()
	if fl, ok := fc.(pfFlusher); ok {
		confirmed, err := fl.flushed()
		if err != nil {
			// Most often the remote side has just ended and the
			// WebSocket is closing: then done follows at once.
			t := time.NewTimer(pfErrorGrace)
			defer t.Stop()
			select {
			case <-done:
				return "", nil
			case <-t.C:
			}
			return pfLost(fmt.Errorf("remote port %d: the local side of %s finished, and asking the streaming server whether it had all the data failed: %w; closed with a reset, as the remote side's answer may be cut", fc.RemotePort(), who, err))
		}
		t := time.NewTimer(pfFlushWait)
		select {
		case <-confirmed:
			t.Stop()
		case <-done:
			t.Stop()
			return "", nil
		case <-t.C:
			return pfLost(fmt.Errorf("remote port %d: the local side of %s finished, but the streaming server did not confirm within %s that it had all the data; closed with a reset, as data may be lost", fc.RemotePort(), who, pfFlushWait))
		}
		// The idle clock starts now.
		act.last.Store(max(act.last.Load(), time.Now().UnixNano()))
	}
	idle := f.opts.FinishedIdle
	f.opts.Config.Log("port-forward: local side of %s finished sending; WebSocket v4 cannot forward that, so the connection closes once the remote side has sent nothing for %s", who, idle)
	idleNow, unsent := pfCloseWhenIdle(act, idle, f.opts.StallTimeout, done, func() int { return pfUnsent(local) })
	if !idleNow {
		return "", nil
	}
	if unsent > 0 || act.writing.Load() {
		return pfLost(fmt.Errorf("remote port %d: the local side of %s finished sending, then read nothing of the remote side's answer for %s; crisp closed the connection with a reset, losing at least %d bytes it had for it", fc.RemotePort(), who, f.opts.StallTimeout, unsent))
	}
	if remoteBytes.Load() == 0 {
		return pfLost(fmt.Errorf("remote port %d: the local side of %s finished and the remote side sent nothing for %s after it had all the data; WebSocket v4 cannot pass the end on, so crisp closed the connection with a reset: an answer still coming would be lost (a protocol that half-closes, --transport spdy, passes the end on)", fc.RemotePort(), who, idle))
	}
	reset = fmt.Sprintf("its local side had finished and the remote side sent nothing for %s (WebSocket v4 cannot tell whether it had finished)", idle)
	f.opts.Config.Log("port-forward: closing the connection of %s with a reset: %s", who, reset)
	return reset, nil
}

// pfActivity is when a connection last moved data towards its local client.
type pfActivity struct {
	last    atomic.Int64 // when the remote side last sent, or a write to the local client ended (UnixNano)
	writing atomic.Bool  // a write to the local client is under way
}

// pfDrainPoll is how often the wait for the local client to take what
// crisp passed on looks at the socket.
const pfDrainPoll = 20 * time.Millisecond

// pfCloseWhenIdle waits until the remote side has sent nothing for idle and
// the local client has taken all crisp passed on (true, 0), or until the
// remote side ended (done closed: false). While the local client has not
// taken everything (a write to it blocks, or its socket holds unsent
// bytes) the idle clock does not run; a client that takes nothing for
// stall ends the wait too: true and the bytes its socket still held.
// unsent tells those bytes.
func pfCloseWhenIdle(act *pfActivity, idle, stall time.Duration, done <-chan struct{}, unsent func() int) (bool, int) {
	t := time.NewTimer(min(idle, pfDrainPoll))
	defer t.Stop()
	var pending bool // the local client has not taken everything
	var seen int64   // act.last when pending began or progress was last seen
	var left int     // unsent bytes then
	var progress time.Time
	for {
		select {
		case <-done:
			return false, 0
		case <-t.C:
		}
		now, last := time.Now(), act.last.Load()
		n := unsent()
		if !act.writing.Load() && n == 0 {
			pending = false
			if quiet := now.Sub(time.Unix(0, last)); quiet < idle {
				t.Reset(idle - quiet)
				continue
			}
			return true, 0
		}
		if !pending || last != seen || n < left {
			pending, seen, left, progress = true, last, n, now // it moves
		} else if now.Sub(progress) >= stall {
			return true, n
		}
		t.Reset(pfDrainPoll)
	}
}

// pfLost is finishWithoutHalfClose's answer for a reset that likely lost
// data: err is the reason and the failure to report.
func pfLost(err error) (string, error) { return err.Error(), err }
