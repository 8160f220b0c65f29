package main

import (
	"os"

	"github.com/moby/term"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
)

// systemStreams are the process's standard streams.
func systemStreams() cmdutil.IOStreams {
	return cmdutil.IOStreams{
		In:     os.Stdin,
		Out:    os.Stdout,
		ErrOut: os.Stderr,
		IsTerminalIn: func() bool {
			_, isTerm := term.GetFdInfo(os.Stdin)
			return isTerm
		},
	}
}
