package fleet

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/crisp-cri/crisp/internal/feature/report"
)

// phase is where a node is, for the progress: what the summary line counts.
type phase int

const (
	phasePending phase = iota // asked for, no crisp running yet
	phaseRunning              // crisp runs on the node
	phaseOK
	phaseFailed
	phases
)

// redrawEvery spaces a terminal's redraws of the summary line: a thousand
// nodes changing state within a second redraw it ten times, not a thousand.
const redrawEvery = 100 * time.Millisecond

// tracker shows a run's progress on its writer. Without a terminal it
// writes a line per node state change (created, Pending with its reasons,
// running, ok, FAIL): a CI log that says what each node did and when. On a
// terminal (live) it keeps one summary line, redrawn in place at most every
// redrawEvery and once a second for the elapsed time; other messages go
// above it. Either way it ends with the summary line.
type tracker struct {
	w     io.Writer
	live  bool
	label string // "crisp fleet smoke"
	start time.Time

	mu     sync.Mutex
	phase  map[string]phase
	count  [phases]int
	total  int  // 0 until the nodes are known: nothing is drawn before
	shown  bool // a live line is on the terminal
	drawn  time.Time
	closed bool
	stop   chan struct{}
	done   chan struct{}
}

// newTracker starts a tracker; finish stops it.
func newTracker(w io.Writer, live bool, mode string) *tracker {
	t := &tracker{w: w, live: live && w != nil, label: "crisp fleet " + mode, start: time.Now(), phase: map[string]phase{},
		stop: make(chan struct{}), done: make(chan struct{})}
	if !t.live {
		close(t.done)
		return t
	}
	go func() {
		defer close(t.done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-t.stop:
				return
			case <-tick.C:
				t.mu.Lock()
				t.draw()
				t.mu.Unlock()
			}
		}
	}()
	return t
}

// expect sets how many nodes the run has.
func (t *tracker) expect(total int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total = total
	t.redraw()
}

// event moves node to ph; without a terminal msg is its line.
func (t *tracker) event(node string, ph phase, msg string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old, ok := t.phase[node]; ok {
		t.count[old]--
	}
	t.phase[node] = ph
	t.count[ph]++
	if !t.live {
		t.line(report.Printable(node) + ": " + report.Printable(msg))
		return
	}
	t.redraw()
}

// say writes a message that is no node's state (an API error, leftovers).
func (t *tracker) say(msg string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.line(report.Printable(msg))
	t.draw()
}

// finish stops the redraws and writes the summary line for good.
func (t *tracker) finish() {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.closed = true
	close(t.stop)
	t.mu.Unlock()
	<-t.done
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.w == nil || max(t.total, len(t.phase)) == 0 {
		return // no node was asked for: the run's error says why
	}
	t.clear()
	_, _ = fmt.Fprintf(t.w, "%s\n", t.summary()) // progress is a courtesy: a lost line changes nothing
}

// summary is the state of the run in one line.
func (t *tracker) summary() string {
	total := max(t.total, len(t.phase))
	pending := total - t.count[phaseRunning] - t.count[phaseOK] - t.count[phaseFailed]
	return fmt.Sprintf("%s: %d nodes: %d pending, %d running, %d ok, %d failed (%s)", t.label, total, pending,
		t.count[phaseRunning], t.count[phaseOK], t.count[phaseFailed], time.Since(t.start).Round(time.Second))
}

// line writes a whole line (above the live line, which is redrawn by the
// caller). Called with mu held.
func (t *tracker) line(msg string) {
	if t.w == nil || max(t.total, len(t.phase)) == 0 {
		return // no node was asked for: the run's error says why
	}
	t.clear()
	_, _ = fmt.Fprintf(t.w, "crisp fleet: %s\n", msg) // as in finish
}

// redraw draws the live line unless it was drawn a moment ago. Called with
// mu held.
func (t *tracker) redraw() {
	if time.Since(t.drawn) >= redrawEvery {
		t.draw()
	}
}

// draw writes the live line in place. Called with mu held.
func (t *tracker) draw() {
	if !t.live || t.closed || t.total == 0 {
		return
	}
	_, _ = fmt.Fprintf(t.w, "\r\x1b[K%s", t.summary()) // as in finish
	t.shown, t.drawn = true, time.Now()
}

// clear erases the live line, if shown. Called with mu held.
func (t *tracker) clear() {
	if t.shown {
		_, _ = io.WriteString(t.w, "\r\x1b[K") // as in finish
		t.shown = false
	}
}
