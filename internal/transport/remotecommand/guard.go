package remotecommand

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/crisp-cri/crisp/internal/transport"
)

// Guards that end a session crisp cannot finish honestly, instead of
// letting it hang or end as if all were well.

// stdinEOFError is the fail-fast answer to piped stdin on a protocol that
// cannot pass the end of stdin on (SPDY channel.k8s.io, whose stdin stream
// is reset at the session's end and never half-closed; WebSocket
// v4.channel.k8s.io and older, the base64 framings): a command that reads
// its input to the end (wc, cat, sort) would wait for an end that never
// comes, so crisp ends the session at once rather than hang. Interactive
// stdin (a terminal) only gets a warning, as a user can end the command by
// hand.
//
// The versions that can pass it on are the catalogue's (Carrying).
func stdinEOFError(op string, offer transport.Offer, protocol string) error {
	if offer.Transport == transport.SPDY {
		can := transport.Carrying(transport.SPDY, transport.CanCloseStdin) // newest first
		return fmt.Errorf("%s: SPDY %s cannot pass the end of stdin to the remote process, so a command reading piped input to its end would never finish; "+
			"offer a newer protocol (SPDY %s to %s pass it: drop --protocol %s), or use -t for an interactive session", op, protocol, can[len(can)-1].Name, can[0].Name, protocol)
	}
	can := transport.Names(transport.Carrying(transport.WebSocket, transport.CanCloseStdin))
	return fmt.Errorf("%s: WebSocket %s cannot pass the end of stdin to the remote process, so a command reading piped input to its end would never finish; "+
		"use --transport spdy (or auto), a runtime that speaks WebSocket %s, or -t for an interactive session", op, protocol, strings.Join(can, " or "))
}

// needsStdinEOF reports whether the negotiated protocol (spec) would leave
// piped stdin without its end: one without the stdin-eof capability.
func (s *session) needsStdinEOF(spec protocolSpec) bool {
	if s.stdin == nil || s.s.TTY || s.interactive || !s.failFast {
		return false
	}
	return spec.lacksStdinEOF()
}

// fence keeps crisp's callbacks from touching the caller's things once the
// session has returned. A session whose context ended returns while the
// streaming library's copy goroutines may still run: they must not write
// to the caller's stdout, stderr or warning sink after that (smoke read a
// hash its integrity check was still writing into; a test read warnings
// the stdin goroutine was still writing).
type fence struct {
	mu       sync.Mutex
	closed   bool
	inFlight sync.WaitGroup
}

// fenceCloseWait bounds how long close waits for work in flight (a write
// blocked on a reader that stopped reading is left behind).
const fenceCloseWait = 2 * time.Second

// enter reports whether the session is still running; if so, the caller
// must call leave when done.
func (f *fence) enter() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.inFlight.Add(1)
	return true
}

func (f *fence) leave() { f.inFlight.Done() }

// close makes later enters fail and waits (at most fenceCloseWait) for the
// work in flight.
func (f *fence) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	done := make(chan struct{})
	go func() {
		f.inFlight.Wait()
		close(done)
	}()
	t := time.NewTimer(fenceCloseWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// localWriter is a local output stream (crisp's stdout or stderr) that
// remembers its first write error: a full disk or a closed pipe on crisp's
// side is crisp's failure, never a silent success. The first error also
// ends the session (onErr), since the output has nowhere to go. Once the
// session has returned (its fence closed), it refuses writes.
type localWriter struct {
	w     io.Writer
	name  string
	onErr func()
	fence *fence

	mu  sync.Mutex
	err error
}

// errSessionReturned fails a write that comes after the session returned.
var errSessionReturned = errors.New("the session has returned")

func (l *localWriter) Write(p []byte) (int, error) {
	if !l.fence.enter() {
		return 0, errSessionReturned
	}
	n, err := l.w.Write(p)
	l.fence.leave()
	if err != nil {
		l.mu.Lock()
		first := l.err == nil
		if first {
			l.err = err
		}
		l.mu.Unlock()
		if first && l.onErr != nil {
			l.onErr()
		}
	}
	return n, err
}

func (l *localWriter) failed() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		return nil
	}
	return fmt.Errorf("writing the remote command's %s here failed: %w", l.name, l.err)
}
