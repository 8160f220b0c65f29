// Package startup marks when the process's own start-up began and when main
// was reached, the origin of -v's timing breakdown.
//
// Go initialises, among the packages whose imports are done, the one first
// in import-path order: this leaf package (it imports only time) therefore
// runs before nearly all of crisp's dependencies (github.com/[d-z]*,
// google.golang.org, k8s.io, ...), and their initialisation counts as
// start-up. Only the Go runtime and the standard library packages sorting
// before it (and the kernel loading the binary) come earlier.
package startup

import (
	"sync/atomic"
	"time"
)

// Began is when this package was initialised.
var Began = time.Now()

var mainAt atomic.Int64

// MarkMain records that main was reached; the first call counts.
func MarkMain() { mainAt.CompareAndSwap(0, time.Now().UnixNano()) }

// Main is when main was reached, or Began when MarkMain was not called (a
// test binary, say).
func Main() time.Time {
	if ns := mainAt.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return Began
}
