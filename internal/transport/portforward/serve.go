package portforward

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/crisp-cri/crisp/internal/base/tracefile"
	"github.com/crisp-cri/crisp/internal/transport"
)

// ServeAll forwards the connections of every listener to its remote port
// until ctx ends or a listener breaks (which ends them all), then drains as
// Serve does and returns the listeners' errors joined. It negotiates first
// if Negotiate was not called (a failure is returned, nil if ctx ended);
// once the protocol is known, ready (if set) receives the listeners with
// their actual local ports: the moment the forward is usable. ServeAll
// closes every listener on every way out.
func (f *Forwarder) ServeAll(ctx context.Context, listeners []LocalListener, ready func([]LocalListener)) error {
	if _, err := f.Negotiate(ctx); err != nil {
		for _, l := range listeners {
			_ = l.Close()
		}
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	if ready != nil {
		ready(listeners)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(listeners))
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	for i, l := range listeners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f.Serve(serveCtx, l.Listener, l.Remote); err != nil {
				errs[i] = err
				stop() // a broken listener ends the forward
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Serve accepts connections on l and forwards each to the remote port until
// ctx ends; then it closes l, lets open connections finish for the drain
// timeout, closes what is left and returns nil. A failed connection is
// reported and closed; the others carry on. Serve closes l.
func (f *Forwarder) Serve(ctx context.Context, l net.Listener, remote uint16) error {
	connCtx, cancelConns := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelConns()
	stop := context.AfterFunc(ctx, func() { _ = l.Close() })
	defer stop()

	var wg sync.WaitGroup
	var open atomic.Int64
	var acceptErr error
	var backoff time.Duration
	// Accept trouble is said at most once per pfTroubleQuiet, and its end
	// once: a forward at its file limit flaps at every closed connection.
	var troubleSaid time.Time
	var recoveryDue bool
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			if pfAcceptRetryable(err) {
				// Out of file descriptors and the like: wait, as net/http
				// does, instead of giving up on every port. Said once per
				// episode: the retries would flood stderr.
				if backoff == 0 && time.Since(troubleSaid) >= pfTroubleQuiet {
					f.reportAcceptTrouble(l, err, open.Load())
					troubleSaid, recoveryDue = time.Now(), true
				}
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				t := time.NewTimer(backoff)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
				}
				continue
			}
			acceptErr = fmt.Errorf("port-forward: accepting on %s: %w", l.Addr(), err)
			_ = l.Close()
			break
		}
		if recoveryDue {
			f.report("port-forward: accepting on %s again", l.Addr())
			recoveryDue = false
		}
		backoff = 0
		wg.Add(1)
		open.Add(1)
		go func() {
			defer wg.Done()
			defer open.Add(-1)
			f.handle(connCtx, c, remote)
		}()
	}

	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	t := time.NewTimer(f.opts.DrainTimeout)
	defer t.Stop()
	select {
	case <-drained:
	case <-t.C:
		// Close what is left, and the connections to the runtime under
		// them: a writer blocked on a runtime that stopped reading holds
		// the SPDY library's lock that closing a stream needs.
		cancelConns()
		f.abortSessions()
		t.Reset(pfAbortWait)
		select {
		case <-drained:
		case <-t.C:
			f.report("port-forward: %d connection(s) on %s still closing %s after the drain; exiting without them", open.Load(), l.Addr(), pfAbortWait)
		}
	}
	return acceptErr
}

// pfTroubleQuiet is how long accept trouble goes unsaid after it was said.
const pfTroubleQuiet = 10 * time.Second

// pfAbortWait bounds the wait for connections after their connections to the
// runtime were closed under them.
const pfAbortWait = 2 * time.Second

// pfAcceptRetryable tells passing accept failures from a broken listener.
func pfAcceptRetryable(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM)
}

// reportAcceptTrouble says why accept fails for a while, and what to do
// when it is the file descriptor limit.
func (f *Forwarder) reportAcceptTrouble(l net.Listener, err error, open int64) {
	if hint := pfLimitHint(err); hint != "" {
		f.report("port-forward: accepting on %s: %v: %s; %d connection(s) open; new ones wait in the listen queue, retrying until some close", l.Addr(), err, hint, open)
		return
	}
	f.report("port-forward: accepting on %s: %v; retrying", l.Addr(), err)
}

// handle forwards one accepted connection. --trace-file records its open
// and its end: how (a clean end, a reset and why, a failure), and the bytes
// passed each way.
func (f *Forwarder) handle(ctx context.Context, local net.Conn, remote uint16) {
	id := f.connSeq.Add(1)
	where := fmt.Sprintf("%s -> %d", local.LocalAddr(), remote)
	f.opts.Config.Log("port-forward: connection %d from %s on %s", id, local.RemoteAddr(), where)
	f.ft.ForwardOpen(local.RemoteAddr().String(), remote, id)
	fc, err := f.Dial(ctx, remote)
	if err != nil {
		// What the client sent is lost: it must not take this for an end.
		pfResetLocal(local)
		_ = local.Close()
		end := transport.ConnEnd{How: tracefile.EndError, Err: err}
		if ctx.Err() != nil {
			end = transport.ConnEnd{How: tracefile.EndClosed, Reason: pfStopping}
		} else {
			f.report("port-forward %s: connection %d failed: %s%s (local client %s)", where, id, pfMessage(err), pfHintSuffix(err), local.RemoteAddr())
		}
		f.ft.ForwardEnd(end, remote, id)
		return
	}
	if f.opts.Config.Trace != nil || f.ft != nil {
		fc = &pfTraceConn{ForwardConn: fc, cfg: f.opts.Config, id: id, ft: f.ft}
	}
	end := f.pipe(ctx, local, fc)
	err = end.Err
	var re *RemoteError
	if errors.As(err, &re) {
		f.ft.ForwardError(re.Message, remote, id) // --trace-file
	}
	if so, ok := fc.(sessionOwner); ok && errors.As(err, &re) {
		f.retire(so.forwardSession())
	}
	if err != nil && ctx.Err() == nil {
		f.report("port-forward %s: connection %d failed: %s%s (local client %s)", where, id, pfMessage(err), pfHintSuffix(err), local.RemoteAddr())
	}
	if ctx.Err() != nil && end.How == tracefile.EndError {
		// Not reported: the forward is stopping, which is why it failed.
		end.How, end.Reason = tracefile.EndClosed, pfStopping
	}
	pfTracef(f.opts.Config, "-- conn%d %s (remote port %d): sent %d B, received %d B", id, end.How, remote, end.Sent, end.Received)
	f.ft.ForwardEnd(end, remote, id)
}

// pfStopping is the reason recorded for connections the forward's end closed.
const pfStopping = "the port-forward stopped"

// pfHintSuffix is "; " and the limit hint for err, or "".
func pfHintSuffix(err error) string {
	if hint := pfLimitHint(err); hint != "" {
		return "; " + hint
	}
	return ""
}

// pfMessage is err's text without the "port-forward:" prefixes of the
// layers it went through: the report already names port-forward.
func pfMessage(err error) string {
	msg := strings.ReplaceAll(err.Error(), ": port-forward: ", ": ")
	return strings.TrimPrefix(msg, "port-forward: ")
}

// pipe copies both ways until the remote side ends, and returns how the
// connection ended; its Err is the remote side's error, if any, to report.
// A local end of input becomes a half-close.
func (f *Forwarder) pipe(ctx context.Context, local net.Conn, fc ForwardConn) transport.ConnEnd {
	var closeOnce sync.Once
	closeBoth := func() { closeOnce.Do(func() { _ = fc.Close(); _ = local.Close() }) }
	stop := context.AfterFunc(ctx, closeBoth)
	defer stop()

	upDone, downDone := make(chan struct{}), make(chan struct{})
	if d, ok := fc.(droppable); ok && d.dropped() != nil {
		// The local client stopped reading while blocked on its socket:
		// only closing it here ends that write.
		go func() {
			select {
			case <-d.dropped():
				pfResetLocal(local) // the client must not take the cut for an end
				closeBoth()
			case <-downDone:
			}
		}()
	}
	act := &pfActivity{}
	act.last.Store(time.Now().UnixNano())
	var idleReset atomic.Pointer[string] // why crisp reset a finished connection
	var lost atomic.Pointer[error]       // the connection was closed with data possibly lost
	remoteBytes := &atomic.Int64{}
	var sent int64 // bytes passed to the remote side (read after upDone)
	go func() {
		defer close(upDone)
		bp := f.bufs.Get().(*[]byte)
		defer f.bufs.Put(bp)
		w := &pfWriteErr{w: fc}
		n, err := io.CopyBuffer(w, pfReaderOnly{local}, *bp)
		sent = n
		switch {
		case w.err != nil:
			// The remote side stopped taking data: its reader below learns
			// why (the runtime's message, or the end). Should it not end,
			// give up on the connection after a grace period.
			t := time.AfterFunc(pfErrorGrace, closeBoth)
			<-downDone
			t.Stop()
			return
		case err != nil:
			// The local side broke: nothing more to forward either way.
			closeBoth()
			return
		}
		if cerr := fc.CloseWrite(); errors.Is(cerr, ErrHalfCloseUnsupported) {
			// The remote side will never learn that the local one is
			// done: once it has nothing more to say, close the connection
			// (else each finished connection holds its sockets, and the
			// remote end, for good).
			why, lerr := f.finishWithoutHalfClose(local, fc, act, remoteBytes, downDone)
			if lerr != nil {
				lost.Store(&lerr)
			}
			if why != "" {
				idleReset.Store(&why)
				pfResetLocal(local) // the client must not take a cut for an end
				closeBoth()
			}
		}
	}()

	bp := f.bufs.Get().(*[]byte)
	lw := &pfWriteErr{w: local}
	_, err := io.CopyBuffer(&pfWriteClock{w: lw, act: act}, &pfReadClock{r: fc, act: act, n: remoteBytes}, *bp)
	f.bufs.Put(bp)
	close(downDone)
	dropped := pfDropErr(fc)
	verdict := false // fc.RemoteError was asked
	if err == nil && remoteBytes.Load() == 0 {
		// Nothing came: most often nothing listens on the remote port, and
		// the runtime's message trails the data's end. Take it first, so
		// the client gets a reset, not an empty answer that looks whole.
		err, verdict = fc.RemoteError(), true
	}
	stopped := ctx.Err() != nil // the forward's end closed it under the copy
	if dropped != nil || stopped || err != nil && !pfLocalClosed(err, lw.err != nil) {
		pfResetLocal(local) // cut or failed: the client must not take this for an end
	}
	if err == nil && !stopped {
		// The local client gets its EOF now; the runtime's verdict (an
		// error message trailing the data) is waited for after.
		if cw, ok := local.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		if !verdict {
			err = fc.RemoteError()
		}
	}
	closeBoth()
	<-upDone
	end := transport.ConnEnd{Sent: sent, Received: remoteBytes.Load()}
	switch {
	case dropped != nil:
		end.How, end.Reason, end.Err = tracefile.EndReset, dropped.Error(), dropped
	case lost.Load() != nil:
		lerr := *lost.Load()
		end.How, end.Reason, end.Err = tracefile.EndReset, lerr.Error(), lerr
	case idleReset.Load() != nil:
		end.How, end.Reason = tracefile.EndReset, *idleReset.Load()
	case stopped:
		end.How, end.Reason = tracefile.EndClosed, pfStopping
	case err == nil:
		end.How = tracefile.EndEOF
	case pfLocalClosed(err, lw.err != nil):
		end.How, end.Reason = tracefile.EndClosed, "the local client closed the connection"
	default:
		end.How, end.Err = tracefile.EndError, err
	}
	return end
}

// droppable is a forwarded connection that can be dropped under the pipe:
// spdyForwardConn, whose local client stopped reading.
type droppable interface {
	dropped() <-chan struct{}
	dropErr() error
}

// pfDropErr is why fc was dropped under the pipe, nil if it was not.
func pfDropErr(fc ForwardConn) error {
	d, ok := fc.(droppable)
	if !ok {
		return nil
	}
	select {
	case <-d.dropped(): // a nil channel never is
		return d.dropErr()
	default:
		return nil
	}
}

// pfResetLocal makes closing the local connection send a reset instead of
// an end: a client whose data was cut must see an error, never a clean end.
func pfResetLocal(local net.Conn) {
	if tc, ok := local.(interface{ SetLinger(int) error }); ok {
		_ = tc.SetLinger(0) // best effort: a plain close still ends the connection
	}
}

// pfReadClock notes when its reader last returned data, and how much.
type pfReadClock struct {
	r   io.Reader
	act *pfActivity
	n   *atomic.Int64
}

func (c *pfReadClock) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.act.last.Store(time.Now().UnixNano())
		c.n.Add(int64(n))
	}
	return n, err
}

// pfWriteClock notes a write to the local client under way, and when it
// ended: a write blocked on a client that reads slowly is not idleness.
type pfWriteClock struct {
	w   io.Writer
	act *pfActivity
}

func (c *pfWriteClock) Write(p []byte) (int, error) {
	c.act.writing.Store(true)
	n, err := c.w.Write(p)
	c.act.last.Store(time.Now().UnixNano())
	c.act.writing.Store(false)
	return n, err
}

// pfLocalClosed recognises errors that only say the local socket went away
// (the user's client hung up) or was closed here, which are not worth a
// report. A reset or broken pipe counts only when writing to the local
// socket failed (localWrite): the same errors from the connection to the
// runtime mean the runtime cut it.
func pfLocalClosed(err error, localWrite bool) bool {
	var re *RemoteError
	if errors.As(err, &re) || errors.Is(err, errSessionLost) {
		return false
	}
	if errors.Is(err, net.ErrClosed) || errors.Is(err, io.ErrClosedPipe) {
		return true
	}
	return localWrite && (errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET))
}

// pfWriteErr remembers the error of its writer, so a copy can tell which
// side failed.
type pfWriteErr struct {
	w   io.Writer
	err error
}

func (w *pfWriteErr) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil {
		w.err = err
	}
	return n, err
}

// pfReaderOnly hides WriteTo so io.CopyBuffer uses the pooled buffer
// instead of allocating its own (pfWriteClock has no ReadFrom either).
type pfReaderOnly struct{ r io.Reader }

func (r pfReaderOnly) Read(p []byte) (int, error) { return r.r.Read(p) }
