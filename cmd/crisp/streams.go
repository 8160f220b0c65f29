package main

import (
	"os"

	"github.com/moby/term"
)

// systemStreams are the process's standard streams.
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
