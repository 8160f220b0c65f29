package transport

import "time"

// Started is when this package was initialised: close to the process's
// start (only the Go runtime and the packages beneath this one ran before),
// the origin of -v's timing breakdown of a session.
var Started = time.Now()
