package tty

import (
	"bytes"
	"io"

	"github.com/moby/term"
	"golang.org/x/sys/unix"
)

// keysAsTyped sets the terminal fd up for input without a remote TTY that
// crisp must see key by key (attach -i's detach keys): line buffering
// (ICANON) and XON/XOFF flow control (IXON, which takes ctrl-q and ctrl-s)
// go; echo, keys as signals (^C), CR-to-NL on input and output processing
// stay, so the terminal looks and behaves as a cooked one. It returns the
// saved settings, for term.RestoreTerminal.
func keysAsTyped(fd uintptr) (*term.State, error) {
	state, err := term.SaveState(fd)
	if err != nil {
		return nil, err
	}
	tios, err := unix.IoctlGetTermios(int(fd), ioctlGetTermios)
	if err != nil {
		return nil, err
	}
	tios.Lflag &^= unix.ICANON
	tios.Iflag &^= unix.IXON
	tios.Cc[unix.VMIN], tios.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(int(fd), ioctlSetTermios, tios); err != nil {
		return nil, err
	}
	return state, nil
}

// EOFKey is the key that ends input on the terminal In (its VEOF
// character, ctrl-d unless stty changed it), and whether In is a terminal
// at all. Without line buffering (KeysAsTyped) the terminal sends it as a
// byte; EOFReader turns it back into the end of input.
func (t Terminal) EOFKey() (byte, bool) {
	fd, ok := t.terminalFd(t.In)
	if !ok {
		return 0, false
	}
	tios, err := unix.IoctlGetTermios(int(fd), ioctlGetTermios)
	if err != nil || tios.Cc[unix.VEOF] == 0 {
		return 0x04, true
	}
	return tios.Cc[unix.VEOF], true
}

// EOFReader reads from r until the byte key, which ends the input (io.EOF)
// as the terminal's end-of-file key does with line buffering.
type EOFReader struct {
	r     io.Reader
	key   byte
	ended bool
}

// NewEOFReader returns a reader over r that ends at key.
func NewEOFReader(r io.Reader, key byte) *EOFReader { return &EOFReader{r: r, key: key} }

// Read passes bytes through up to key, then reports io.EOF.
func (e *EOFReader) Read(p []byte) (int, error) {
	if e.ended {
		return 0, io.EOF
	}
	n, err := e.r.Read(p)
	if i := bytes.IndexByte(p[:n], e.key); i >= 0 {
		e.ended = true
		if i == 0 {
			return 0, io.EOF
		}
		return i, nil
	}
	return n, err
}
