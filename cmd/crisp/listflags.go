package main

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

// listFlags are the flags ps and pods share besides their selectors: one
// ID or prefix, IDs only, whole IDs, or a block of lines an object.
type listFlags struct {
	ID                      string
	Quiet, NoTrunc, Verbose bool
}

// bind adds the flags; noun is what is listed ("container", "pod").
func (l *listFlags) bind(fl *pflag.FlagSet, noun string) {
	fl.StringVar(&l.ID, "id", "", "only the "+noun+" with this ID or ID prefix")
	fl.BoolVarP(&l.Quiet, "quiet", "q", false, "print "+noun+" IDs only")
	fl.BoolVarP(&l.Verbose, "verbose", "v", false, "a block of key: value lines a "+noun+" instead of the table (crictl's -v)")
	fl.BoolVar(&l.NoTrunc, "no-trunc", false, "do not truncate IDs")
}

// validate rejects -q with an -o that is not a table.
func (l *listFlags) validate(f *cmdutil.Factory) error {
	return cmdutil.ValidateQuiet(l.Quiet, f.Global.Output)
}

// options are the listing's options, CREATED measured against now.
func (l *listFlags) options(now time.Time) query.ListOptions {
	return query.ListOptions{Quiet: l.Quiet, NoTrunc: l.NoTrunc, Now: now, Verbose: l.Verbose}
}
