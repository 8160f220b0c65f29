package tty

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/creack/pty"
)

func setSize(t *testing.T, ptmx *os.File, width, height uint16) {
	t.Helper()
	if err := pty.Setsize(ptmx, &pty.Winsize{Cols: width, Rows: height}); err != nil {
		t.Fatalf("setting the pseudo-terminal's size: %v", err)
	}
}

// winch sends SIGWINCH to the test process, as the kernel does to a terminal's foreground process
// group when its size changes (the pty here is not the process's controlling terminal).
func winch(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), syscall.SIGWINCH); err != nil {
		t.Fatal(err)
	}
}

func TestSizeQueue(t *testing.T) {
	tty, ptmx := openPTY(t)
	setSize(t, ptmx, 80, 24)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := Terminal{In: tty, Out: tty}.MonitorSize(ctx)
	if q == nil {
		t.Fatal("MonitorSize on a pseudo-terminal returned nil")
	}

	if got := q.Next(); got == nil || *got != (TerminalSize{Width: 80, Height: 24}) {
		t.Fatalf("initial size %v, want 80x24", got)
	}

	setSize(t, ptmx, 132, 50)
	winch(t)
	winch(t) // more signals for the same size do not make more entries
	if got := q.Next(); got == nil || *got != (TerminalSize{Width: 132, Height: 50}) {
		t.Fatalf("size after resize %v, want 132x50", got)
	}

	setSize(t, ptmx, 100, 30)
	winch(t)
	if got := q.Next(); got == nil || *got != (TerminalSize{Width: 100, Height: 30}) {
		t.Fatalf("size after second resize %v, want 100x30", got)
	}

	cancel()
	if got := q.Next(); got != nil {
		t.Fatalf("Next after cancel = %v, want nil", got)
	}
}

// TestSizeQueueStopsWhileWaiting: a Next blocked waiting for a resize returns nil when the context
// is cancelled (client-go's resize goroutine depends on it to return).
func TestSizeQueueStopsWhileWaiting(t *testing.T) {
	tty, ptmx := openPTY(t)
	setSize(t, ptmx, 80, 24)
	ctx, cancel := context.WithCancel(context.Background())
	q := Terminal{In: tty, Out: tty}.MonitorSize(ctx)
	if got := q.Next(); got == nil {
		t.Fatal("no initial size")
	}
	var wg sync.WaitGroup
	var got *TerminalSize
	wg.Go(func() { got = q.Next() })
	cancel()
	wg.Wait()
	if got != nil {
		t.Fatalf("Next = %v after cancel, want nil", got)
	}
}

// TestSizeQueueFromIn: with Out not a terminal, the size comes from In.
func TestSizeQueueFromIn(t *testing.T) {
	tty, ptmx := openPTY(t)
	setSize(t, ptmx, 90, 40)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := Terminal{In: tty, Out: &bytes.Buffer{}}.MonitorSize(ctx)
	if got := q.Next(); got == nil || *got != (TerminalSize{Width: 90, Height: 40}) {
		t.Fatalf("initial size %v, want 90x40", got)
	}
}

// TestSizeQueueUnsetSize: a terminal whose size is unset (0x0) reports nothing until it is resized.
func TestSizeQueueUnsetSize(t *testing.T) {
	tty, ptmx := openPTY(t)
	setSize(t, ptmx, 0, 0)
	term := Terminal{In: tty, Out: tty}
	if s, ok := term.Size(); ok {
		t.Fatalf("Size of a 0x0 terminal = %v, ok; want not ok", s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := term.MonitorSize(ctx)
	setSize(t, ptmx, 80, 24)
	winch(t)
	// The first Next finds the size set by now: either as the initial size or after the signal.
	if got := q.Next(); got == nil || *got != (TerminalSize{Width: 80, Height: 24}) {
		t.Fatalf("size %v, want 80x24", got)
	}
}

func TestSizeQueueWithoutTerminal(t *testing.T) {
	for _, term := range []Terminal{
		{In: strings.NewReader(""), Out: &bytes.Buffer{}},
		{In: strings.NewReader(""), Out: &bytes.Buffer{}, IsTerminal: func(any) bool { return true }},
		{},
	} {
		q := term.MonitorSize(context.Background())
		if q != nil {
			t.Errorf("MonitorSize(%+v) = %v, want nil", term, q)
		}
		if got := q.Next(); got != nil {
			t.Errorf("nil queue's Next = %v, want nil", got)
		}
		if s, ok := term.Size(); ok {
			t.Errorf("Size(%+v) = %v, ok; want not ok", term, s)
		}
	}
}
