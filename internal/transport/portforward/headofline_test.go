package portforward

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
)

// TestPortForwardStalledReaderAlone: one local client that sends but never
// reads stops only its own connection. Over SPDY and the tunnel every
// connection shares one SPDY connection with no flow control per stream;
// before, the stalled client's 8 MiB backlog stopped the read loop, the
// healthy connections beside it froze and the stall watch closed them all.
// Now the stalled one is dropped with a report and a reset, and the
// healthy ones arrive intact.
func TestPortForwardStalledReaderAlone(t *testing.T) {
	app := startPFApp(t, hashApp)
	_, src := startStreamServer(t, streamserver.ProfileFull)
	for _, tc := range pfCases[:2] {
		t.Run(tc.name, func(t *testing.T) {
			var report lockedBuffer
			f := newTestForwarder(t, src, tc.offer, &report)
			srv := serveLocal(t, f, app.port)
			addr := srv.addr
			end := time.Now().Add(pfFaultBound)

			// The offender asks for 256 MiB (the app sends it while it
			// reads) and reads none of it.
			stalled, err := net.DialTimeout("tcp", addr, pfFaultBound)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = stalled.Close() }()
			_ = stalled.SetDeadline(end)
			var hdr [pfAppHeader]byte
			binary.LittleEndian.PutUint64(hdr[8:], 256<<20)
			if _, err := stalled.Write(hdr[:]); err != nil {
				t.Fatal(err)
			}
			// A little data, then nothing: a writer would take the reset's
			// error before the reader below could see it.
			if _, err := io.CopyN(stalled, pfPattern(1), 64<<10); err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond) // its backlog fills meanwhile

			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for i := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c, err := net.DialTimeout("tcp", addr, time.Until(end))
					if err != nil {
						errs <- err
						return
					}
					defer func() { _ = c.Close() }()
					_ = c.SetDeadline(end)
					if err := roundTrip(c, uint64(10+i), 4<<20); err != nil {
						errs <- fmt.Errorf("healthy connection %d: %w", i, err)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}

			// The offender ends with an error, never a clean end.
			_, rerr := io.Copy(io.Discard, stalled)
			var ne net.Error
			switch {
			case errors.As(rerr, &ne) && ne.Timeout():
				t.Errorf("the stalled connection was never dropped")
			case rerr == nil:
				t.Errorf("the stalled connection ended cleanly: its data was cut without an error; reports:\n%s", report.String())
			}
			if err := srv.stop(); err != nil {
				t.Errorf("Serve: %v", err)
			}
			out := report.String()
			if !strings.Contains(out, "connection 1 failed") || !strings.Contains(out, "stopped reading") {
				t.Errorf("no report naming the stalled connection and why:\n%s", out)
			}
			if strings.Contains(out, "connection 2 failed") || strings.Contains(out, "streaming server stopped reading") {
				t.Errorf("healthy connections reported failed:\n%s", out)
			}
		})
	}
}

// TestPortForwardPausedReaderAloneLosesNothing: a connection alone on its
// SPDY connection whose client stops reading for longer than the overrun
// wait holds up no other connection, so it is waited for, and once its
// client reads again everything arrives intact (a busy machine's client,
// or one stopped in a debugger, used to lose its connection after 2s).
func TestPortForwardPausedReaderAloneLosesNothing(t *testing.T) {
	app := startPFApp(t, hashApp)
	_, src := startStreamServer(t, streamserver.ProfileFull)
	for _, tc := range pfCases[:2] {
		t.Run(tc.name, func(t *testing.T) {
			var report lockedBuffer
			f := newTestForwarder(t, src, tc.offer, &report)
			srv := serveLocal(t, f, app.port)
			c, err := net.DialTimeout("tcp", srv.addr, pfFaultBound)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.Close() }()
			_ = c.SetDeadline(time.Now().Add(pfFaultBound))
			// 32 MiB: far past the 8 MiB a stream may hold unread.
			paused := &pausedReader{ReadWriter: c, pause: pfOverrunWait + time.Second}
			if err := roundTrip(paused, 7, 32<<20); err != nil {
				t.Errorf("a connection whose client paused %v: %v; reports:\n%s", paused.pause, err, report.String())
			}
			if err := srv.stop(); err != nil {
				t.Errorf("Serve: %v", err)
			}
			if out := report.String(); strings.Contains(out, "failed") {
				t.Errorf("the paused connection was reported failed:\n%s", out)
			}
		})
	}
}

// pausedReader reads nothing for pause before its first read.
type pausedReader struct {
	io.ReadWriter
	pause  time.Duration
	paused bool
}

func (p *pausedReader) Read(b []byte) (int, error) {
	if !p.paused {
		p.paused = true
		time.Sleep(p.pause)
	}
	return p.ReadWriter.Read(b)
}
