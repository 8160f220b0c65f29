package input

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// File is a named input opened by Open: its reads give way when the
// command's context ends.
type File struct {
	f    *os.File
	ctx  context.Context
	stop func() bool
}

// Open opens the file at path for reading. Opening a FIFO waits for a writer
// and reading a pipe, FIFO or terminal waits for data; both waits end with
// ctx's cause as soon as ctx ends (a signal), and a read after that returns
// it too. Close the File when done.
func Open(ctx context.Context, path string) (*File, error) {
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	fi, err := os.Stat(path) // stat(2) never waits for a writer
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not a file", path)
	}
	var f *os.File
	if fi.Mode()&os.ModeNamedPipe != 0 {
		f, err = openFIFO(ctx, path)
	} else {
		f, err = os.Open(path)
	}
	if err != nil {
		return nil, err
	}
	// Go reads pipes, FIFOs and terminals through its poller: closing the
	// file ends a read parked there.
	return &File{f: f, ctx: ctx, stop: context.AfterFunc(ctx, func() { _ = f.Close() })}, nil
}

// Read reads from the file; once ctx has ended it returns ctx's cause
// rather than the "file already closed" the interruption leaves.
func (f *File) Read(p []byte) (int, error) {
	n, err := f.f.Read(p)
	if err != nil && f.ctx.Err() != nil {
		return n, context.Cause(f.ctx)
	}
	return n, err
}

// Close closes the file (it may already be closed by ctx's end).
func (f *File) Close() error {
	f.stop()
	if err := f.f.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return err
	}
	return nil
}

// fifoRelease bounds how long Open tries to release its own blocked open of
// a FIFO once ctx ends; past it the open is left behind (the command returns
// and the process exits with it).
const fifoRelease = 200 * time.Millisecond

// openFIFO opens a FIFO, which blocks in open(2) until a writer comes. The
// open runs on a goroutine; when ctx ends first, crisp briefly opens the FIFO
// for writing itself (O_NONBLOCK: it never waits), which lets the blocked
// open return so that the goroutine ends and the descriptor is closed.
func openFIFO(ctx context.Context, path string) (*os.File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		done <- opened{f, err}
	}()
	select {
	case o := <-done:
		return o.f, o.err
	case <-ctx.Done():
	}
	giveUp := time.NewTimer(fifoRelease)
	defer giveUp.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		// ENXIO until the goroutine's open is waiting in the kernel.
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = w.Close() // opened only to wake the reader; nothing written
		}
		select {
		case o := <-done:
			if o.f != nil {
				_ = o.f.Close() // read-only, unread: nothing lost
			}
			return nil, context.Cause(ctx)
		case <-giveUp.C:
			go func() {
				if o := <-done; o.f != nil {
					_ = o.f.Close() // read-only, unread: nothing lost
				}
			}()
			return nil, context.Cause(ctx)
		case <-tick.C:
		}
	}
}

// Reader returns a reader of r whose reads give way when ctx ends (with
// ctx's cause), for a stream crisp did not open, such as stdin: each read
// runs on a goroutine of its own, and one blocked when ctx ends is left
// behind (the command returns and the process exits with it).
func Reader(ctx context.Context, r io.Reader) io.Reader {
	return &ctxReader{ctx: ctx, r: r}
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	var n int
	// The read owns its own buffer: one left behind must not write into p
	// after Read has returned.
	buf := make([]byte, min(len(p), 64<<10))
	err := interruptible(c.ctx, func(<-chan struct{}) error {
		var err error
		n, err = c.r.Read(buf)
		return err
	})
	if c.ctx.Err() != nil && errors.Is(err, context.Cause(c.ctx)) {
		return 0, err
	}
	return copy(p, buf[:n]), err
}
