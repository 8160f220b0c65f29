package probe

import (
	"fmt"
	"strings"
)

// ttyCheck is the terminal exchange probe and smoke run: a TTY whose size
// (37x101) is sent as the stream opens; the command prints it, then waits
// for the size to change; once the first size is seen, 40x120 is sent, and
// the command must print that too.
type ttyCheck struct {
	out    *watchWriter
	resize chan TermSize
}

func newTTYCheck() *ttyCheck {
	tc := &ttyCheck{resize: make(chan TermSize, 1)}
	tc.out = newWatchWriter("37 101", func() { tc.resize <- TermSize{Width: 120, Height: 40} })
	tc.out.once = true
	return tc
}

// command prints the size (after a pause: real runtimes may start the
// command before the first size is applied), polls up to
// 5 s for a change, and prints the size again.
func (tc *ttyCheck) command() []string {
	return []string{"sh", "-c", `sleep 0.3; s=$(stty size); echo "$s"; i=0; while [ "$s" = "37 101" ] && [ $i -lt 50 ]; do sleep 0.1; s=$(stty size); i=$((i+1)); done; echo "$s"`}
}

func (tc *ttyCheck) session() Session {
	return Session{Stdout: tc.out, TTY: true, Size: &TermSize{Width: 101, Height: 37}, Resize: tc.resize}
}

func (tc *ttyCheck) verdict(_ Protocol, err error) (Outcome, string) {
	var lines []string
	for _, l := range strings.Split(tc.out.String(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	switch {
	case len(lines) == 0 && err == nil:
		return Fail, "on a TTY, the size command exited 0 but none of its output arrived: " + lostOutput
	case len(lines) == 2 && lines[0] == "37 101" && lines[1] == "40 120":
		return Pass, "a TTY; `stty size` saw 37 101 as sent at the start, then 40 120 after a resize"
	case len(lines) == 1 && lines[0] == "37 101" && err == nil:
		return Fail, "on a TTY, the size command exited 0 after the resize to 40x120, but its last line never arrived: " + lostOutput
	case len(lines) >= 1 && lines[0] != "37 101":
		return Fail, fmt.Sprintf("on a TTY sized 37x101 at the start, `stty size` printed %q (error %v): "+
			"the runtime started the process before it applied the size sent as the stream opened; "+
			"it must set the terminal's size before it starts the process",
			clip(strings.Join(lines, "; ")), err)
	case len(lines) == 2 && lines[1] == "37 101":
		return Fail, "the initial size 37x101 arrived, but the resize to 40x120 never reached the terminal within 5s"
	}
	return Fail, fmt.Sprintf("on a TTY resized from 37x101 to 40x120, `stty size` printed %q (error %v)", clip(strings.Join(lines, "; ")), err)
}

// lostOutput is what a runtime that lost a TTY's output should change
// (containerd 1.6 does over WebSocket without stdin, CRI-O 1.34 now and then
// on any transport: the text names neither, as it is printed on every
// runtime).
const lostOutput = "the runtime sent the exit status and closed the stream before it had copied all of the terminal's output; " +
	"it must finish copying the TTY's output before it reports the exit (crictl loses the same output: the runtime's defect, not the client's)"
