package main

import (
	"io"
	"os"

	"github.com/moby/term"
)

// ioStreams are the standard streams a command talks through. Commands never
// touch os.Stdin/os.Stdout directly, so tests run them against buffers.
type ioStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// IsTerminalIn reports whether In is an interactive terminal. Tests
	// replace it to exercise TTY decisions without a terminal.
	IsTerminalIn func() bool
}

func systemStreams() ioStreams {
	return ioStreams{
		In:     os.Stdin,
		Out:    os.Stdout,
		ErrOut: os.Stderr,
		IsTerminalIn: func() bool {
			_, isTerm := term.GetFdInfo(os.Stdin)
			return isTerm
		},
	}
}
