package testkit

import "strings"

// IsRuntimeTTYRace reports whether a probe, smoke or doctor check's failure
// detail is one of the TTY races some runtimes have (CRI-O 1.34 now and
// then; crictl sees the same): the stream closed before the terminal's
// output was copied, or the process started before the first size was set.
// Tests of such runtimes log these instead of failing on them. The words
// are probe's; its tests hold them to this predicate.
func IsRuntimeTTYRace(detail string) bool {
	return strings.Contains(detail, "must finish copying the TTY's output") ||
		strings.Contains(detail, "must set the terminal's size before it starts the process")
}
