package main

import "github.com/crisp-cri/crisp/internal/cmdutil"

// groupLifecycle holds crictl's verbs that make, change and remove pods
// and containers, and logs.
const groupLifecycle = "lifecycle"

// verb and pullFlags are cmdutil's: the lifecycle verbs' base options and
// create's and run's pull flags.
type (
	verb      = cmdutil.Verb
	pullFlags = cmdutil.PullFlags
)

var argsRange = cmdutil.ArgsRange
