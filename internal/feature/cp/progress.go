package cp

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progressFrom is how much a copy moves before a bar is drawn: small
// copies stay quiet.
const progressFrom = 8 << 20

// progressEvery spaces the bar's redraws.
const progressEvery = 200 * time.Millisecond

// Progress draws a one-line bar on a terminal for a large copy: bytes
// done, of how many when known, and the rate. A nil *Progress counts
// nothing and draws nothing.
type Progress struct {
	w     io.Writer
	label string
	total int64 // 0: unknown
	now   func() time.Time

	mu    sync.Mutex
	done  int64
	start time.Time
	last  time.Time
	drawn bool
}

// NewProgress draws on w (the error stream, when it is a terminal).
func NewProgress(w io.Writer, label string, total int64, now func() time.Time) *Progress {
	if now == nil {
		now = time.Now
	}
	t := now()
	return &Progress{w: w, label: label, total: total, now: now, start: t, last: t}
}

// Add counts n more bytes and redraws now and then.
func (p *Progress) Add(n int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	if t := p.now(); p.done >= progressFrom && t.Sub(p.last) >= progressEvery {
		p.last = t
		p.draw(t)
	}
}

// Finish draws the final state of a large copy and ends the line.
func (p *Progress) Finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn || p.done >= progressFrom {
		p.draw(p.now())
		_, _ = io.WriteString(p.w, "\n") // the error stream is the last resort: a failed write there has nowhere to go
	}
}

func (p *Progress) draw(t time.Time) {
	p.drawn = true
	rate := ""
	if secs := t.Sub(p.start).Seconds(); secs > 0 {
		rate = "  " + size(int64(float64(p.done)/secs)) + "/s"
	}
	if p.total > 0 {
		frac := min(float64(p.done)/float64(p.total), 1)
		const width = 30
		fill := int(frac * width)
		bar := strings.Repeat("#", fill) + strings.Repeat(".", width-fill)
		_, _ = fmt.Fprintf(p.w, "\r%s [%s] %3.0f%% %s / %s%s ", p.label, bar, frac*100, size(p.done), size(p.total), rate) // as above
		return
	}
	_, _ = fmt.Fprintf(p.w, "\r%s %s%s ", p.label, size(p.done), rate) // as above
}

// size is n bytes in binary units.
func size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
