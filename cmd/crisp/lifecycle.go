package main

import "github.com/crisp-cri/crisp/internal/cmdutil"

// groupLifecycle holds crictl's verbs that make, change and remove pods
// and containers, and logs.
const groupLifecycle = "lifecycle"

// lifecycleExit is the EXIT STATUS of the lifecycle verbs.
const lifecycleExit = `

EXIT STATUS
  0  done
  1  failure: the runtime refused or could not be reached, a container or
     pod matched nothing or several (the candidates are listed), or a
     config file is malformed (its file and line are named)
  2  bad flags or arguments`

// verb and pullFlags are cmdutil's: the lifecycle verbs' base options and
// create's and run's pull flags.
type (
	verb      = cmdutil.Verb
	pullFlags = cmdutil.PullFlags
)

var argsRange = cmdutil.ArgsRange
