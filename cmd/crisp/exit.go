package main

import (
	"github.com/crisp-cri/crisp/internal/cmdutil"
)

// The commands' shared types and helpers live in internal/cmdutil; these
// are their names in this package. The exit status is decided once, in
// execute, by cmdutil.ExitStatus.
type (
	factory       = cmdutil.Factory
	ioStreams     = cmdutil.IOStreams
	globalOptions = cmdutil.GlobalOptions
	usageError    = cmdutil.UsageError
	tlsOptions    = cmdutil.TLSFlags
)

const (
	exitOK                = cmdutil.ExitOK
	exitFailure           = cmdutil.ExitFailure
	exitUsage             = cmdutil.ExitUsage
	exitCrispFailure      = cmdutil.ExitCrispFailure
	exitInterrupted       = cmdutil.ExitInterrupted
	passThroughAnnotation = cmdutil.PassThroughAnnotation
)

var (
	usageErrorf = cmdutil.UsageErrorf
	errReported = cmdutil.ErrReported
	exitStatus  = cmdutil.ExitStatus
	isUsage     = cmdutil.IsUsage
	exactArgs   = cmdutil.ExactArgs
	atLeastArgs = cmdutil.AtLeastArgs
	maxArgs     = cmdutil.MaxArgs
	noArgs      = cmdutil.NoArgs
	parseLabels = cmdutil.ParseLabels
	printData   = cmdutil.PrintData
)
