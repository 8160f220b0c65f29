package tty

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSafeKeysAsTyped: without a remote TTY the terminal only stops
// buffering lines and taking ctrl-q/ctrl-s; it still echoes and takes ^C
// as a signal. Its settings come back exactly, on return and on panic.
func TestSafeKeysAsTyped(t *testing.T) {
	tty, before := cookedPTY(t)
	term := Terminal{In: tty, Out: tty, KeysAsTyped: true}
	boom := errors.New("boom")
	err := term.Safe(context.Background(), func(context.Context) error {
		tios := termios(t, tty)
		if tios.Lflag&unix.ICANON != 0 || tios.Iflag&unix.IXON != 0 {
			t.Errorf("lines still buffered or ctrl-q still flow control: lflag %#x iflag %#x", tios.Lflag, tios.Iflag)
		}
		if tios.Lflag&(unix.ECHO|unix.ISIG) != unix.ECHO|unix.ISIG || tios.Oflag&unix.OPOST == 0 || tios.Iflag&unix.ICRNL == 0 {
			t.Errorf("not a cooked terminal otherwise: lflag %#x oflag %#x iflag %#x", tios.Lflag, tios.Oflag, tios.Iflag)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("Safe = %v, want fn's error", err)
	}
	assertRestored(t, tty, before)

	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("recovered %v, want the panic to go on", r)
		}
		assertRestored(t, tty, before)
	}()
	_ = term.Safe(context.Background(), func(context.Context) error { panic("boom") })
}

func TestEOFKey(t *testing.T) {
	tty, _ := cookedPTY(t)
	tios := termios(t, tty)
	tios.Cc[unix.VEOF] = 0x1a // ^Z, as stty eof ^Z sets it
	if err := unix.IoctlSetTermios(int(tty.Fd()), unix.TCSETS, &tios); err != nil {
		t.Fatal(err)
	}
	if key, ok := (Terminal{In: tty}).EOFKey(); !ok || key != 0x1a {
		t.Errorf("EOFKey = %#x, %v; want the terminal's 0x1a", key, ok)
	}
	if _, ok := (Terminal{In: strings.NewReader("")}).EOFKey(); ok {
		t.Error("EOFKey of a reader that is no terminal says it is one")
	}
}

func TestEOFReader(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"abc\n\x04more", "abc\n"},
		{"\x04more", ""},
		{"no key", "no key"},
	} {
		got, err := io.ReadAll(NewEOFReader(strings.NewReader(tc.in), 0x04))
		if err != nil || string(got) != tc.want {
			t.Errorf("%q: read %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
