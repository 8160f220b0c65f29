package tracefile

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/crisp-cri/crisp/internal/base/termsafe"
)

// SessionSummary is what one session of a trace amounts to.
type SessionSummary struct {
	Session   int
	Op        string
	Transport string
	Protocol  string
	// Attempts counts handshakes; Refused those not upgraded.
	Attempts, Refused int
	// Bytes and Frames per "dir stream" ("recv stdout", "send stdin", ...).
	Bytes  map[string]int
	Frames map[string]int
	// Start and End bound the session's events.
	Start, End time.Time
	// Gap is the longest quiet time between two frames, ending at GapAt.
	Gap   time.Duration
	GapAt time.Time
	// FirstClose is the first close event ("local"/"remote" and its
	// stream); empty when the trace shows none.
	FirstClose string
	// ExitCode is the exit code the runtime reported, if any.
	ExitCode *int
	// Port-forward: Opened counts the connections accepted, Ends those
	// ended by how (End*), Unended those opened without an end in the
	// trace (still open when it stopped, or crisp died).
	Opened  int
	Ends    map[string]int
	Unended int
}

// Summarise groups events by session, in order of first appearance.
func Summarise(events []Event) []SessionSummary {
	var order []int
	by := map[int]*SessionSummary{}
	lastFrame := map[int]time.Time{}
	open := map[int]map[int64]bool{} // per session, the connections without an end yet
	for _, ev := range events {
		s := by[ev.Session]
		if s == nil {
			s = &SessionSummary{Session: ev.Session, Op: ev.Op, Bytes: map[string]int{}, Frames: map[string]int{}, Ends: map[string]int{}, Start: ev.Time}
			by[ev.Session] = s
			open[ev.Session] = map[int64]bool{}
			order = append(order, ev.Session)
		}
		if ev.Time.Before(s.Start) {
			s.Start = ev.Time
		}
		if ev.Time.After(s.End) {
			s.End = ev.Time
		}
		switch ev.Kind {
		case KindHandshake:
			s.Attempts++
			if ev.Protocol == "" || ev.Error != "" {
				s.Refused++
			} else {
				s.Transport, s.Protocol = ev.Transport, ev.Protocol
			}
		case KindFrame:
			key := ev.Dir + " " + ev.Stream
			s.Bytes[key] += ev.Size
			s.Frames[key]++
			if last, ok := lastFrame[ev.Session]; ok {
				if gap := ev.Time.Sub(last); gap > s.Gap {
					s.Gap, s.GapAt = gap, ev.Time
				}
			}
			lastFrame[ev.Session] = ev.Time
			if ev.ExitCode != nil {
				code := *ev.ExitCode
				s.ExitCode = &code
			}
		case KindClose:
			if s.FirstClose == "" {
				s.FirstClose = strings.TrimSpace(ev.By + " " + ev.Stream)
			}
		case KindOpen:
			s.Opened++
			open[ev.Session][ev.Request] = true
		case KindEnd:
			s.Ends[orDash(ev.End)]++
			delete(open[ev.Session], ev.Request)
		}
	}
	out := make([]SessionSummary, 0, len(order))
	for _, id := range order {
		by[id].Unended = len(open[id])
		out = append(out, *by[id])
	}
	return out
}

// Print writes the events one per line, times relative to their session's
// first event, then a summary per session. A trace file is anyone's bytes
// (and its fields the runtime's and the streaming server's words): every
// string in it is escaped (termsafe.Printable) before the terminal sees it.
func Print(w io.Writer, events []Event) error {
	events = printable(events)
	starts := map[int]time.Time{}
	for _, ev := range events {
		if t, ok := starts[ev.Session]; !ok || ev.Time.Before(t) {
			starts[ev.Session] = ev.Time
		}
	}
	var b strings.Builder
	for _, ev := range events {
		fmt.Fprintf(&b, "%10.6fs  s%-2d %-12s %s\n", ev.Time.Sub(starts[ev.Session]).Seconds(), ev.Session, ev.Op, describe(ev))
	}
	for _, s := range Summarise(events) {
		b.WriteString("\n")
		writeSummary(&b, s)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// printable returns a copy of events whose strings are safe to print.
// Reason, Error and Data are printed quoted (%q), which escapes them too.
func printable(events []Event) []Event {
	p := termsafe.Printable
	out := make([]Event, len(events))
	for i, ev := range events {
		ev.Op, ev.Kind, ev.URL, ev.Transport, ev.Protocol = p(ev.Op), p(ev.Kind), p(ev.URL), p(ev.Transport), p(ev.Protocol)
		ev.Dir, ev.Stream, ev.By, ev.Peer, ev.End = p(ev.Dir), p(ev.Stream), p(ev.By), p(ev.Peer), p(ev.End)
		if ev.Offered != nil {
			offered := make([]string, len(ev.Offered))
			for j, o := range ev.Offered {
				offered[j] = p(o)
			}
			ev.Offered = offered
		}
		out[i] = ev
	}
	return out
}

func describe(ev Event) string {
	switch ev.Kind {
	case KindHandshake:
		var b strings.Builder
		fmt.Fprintf(&b, "handshake %s offered %s", ev.Transport, strings.Join(ev.Offered, ","))
		if ev.Protocol != "" {
			fmt.Fprintf(&b, " -> %s", ev.Protocol)
		}
		if ev.Status != 0 {
			fmt.Fprintf(&b, " HTTP %d", ev.Status)
		}
		fmt.Fprintf(&b, " rpc %.3fms upgrade %.3fms %s", ev.RPCMillis, ev.UpgradeMillis, ev.URL)
		if ev.Reason != "" {
			fmt.Fprintf(&b, " reason %q", ev.Reason)
		}
		if ev.Error != "" {
			fmt.Fprintf(&b, " error %q", ev.Error)
		}
		return b.String()
	case KindClose:
		line := fmt.Sprintf("close     %s by %s", orDash(ev.Stream), orDash(ev.By))
		if ev.Port != 0 || ev.Request != 0 {
			line += fmt.Sprintf(" port %d req %d", ev.Port, ev.Request)
		}
		return line
	case KindOpen:
		return fmt.Sprintf("open      port %d req %d from %s", ev.Port, ev.Request, orDash(ev.Peer))
	case KindEnd:
		line := fmt.Sprintf("end       port %d req %d %s: sent %d B, received %d B", ev.Port, ev.Request, orDash(ev.End), ev.BytesSent, ev.BytesRecv)
		if ev.Reason != "" {
			line += fmt.Sprintf(" reason %q", ev.Reason)
		}
		if ev.Error != "" {
			line += fmt.Sprintf(" error %q", ev.Error)
		}
		return line
	}
	arrow := "<-"
	if ev.Dir == DirSend {
		arrow = "->"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %-6s %-9s", arrow, ev.Stream, ev.Transport)
	if ev.Port != 0 || ev.Request != 0 {
		fmt.Fprintf(&b, " port %d req %d", ev.Port, ev.Request)
	}
	switch {
	case ev.Stream == StreamResize:
		fmt.Fprintf(&b, " %dx%d", ev.Width, ev.Height)
	case ev.ExitCode != nil:
		fmt.Fprintf(&b, " exit status %d", *ev.ExitCode)
	default:
		fmt.Fprintf(&b, " %d B", ev.Size)
	}
	if len(ev.Data) > 0 {
		q := strconv.Quote(string(ev.Data))
		if ev.Truncated {
			q += "..."
		}
		b.WriteString(" " + q)
	}
	return b.String()
}

func writeSummary(b *strings.Builder, s SessionSummary) {
	fmt.Fprintf(b, "session %d (%s): %d handshake(s), %d refused", s.Session, orDash(s.Op), s.Attempts, s.Refused)
	if s.Protocol != "" {
		fmt.Fprintf(b, "; negotiated %s %s", s.Transport, s.Protocol)
	}
	fmt.Fprintf(b, "; %.3fs\n", s.End.Sub(s.Start).Seconds())
	keys := make([]string, 0, len(s.Bytes))
	for k := range s.Bytes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "  %-14s %8d B in %d frame(s)\n", k, s.Bytes[k], s.Frames[k])
	}
	if s.Gap > 0 {
		fmt.Fprintf(b, "  longest gap    %s (before the frame at +%.6fs)\n", s.Gap.Round(time.Microsecond), s.GapAt.Sub(s.Start).Seconds())
	}
	if s.ExitCode != nil {
		fmt.Fprintf(b, "  exit status    %d\n", *s.ExitCode)
	}
	if s.Opened > 0 || len(s.Ends) > 0 {
		fmt.Fprintf(b, "  connections    %d opened; ended: %d eof, %d reset, %d error, %d closed", s.Opened,
			s.Ends[EndEOF], s.Ends[EndReset], s.Ends[EndError], s.Ends[EndClosed])
		if other := sumOther(s.Ends); other > 0 {
			fmt.Fprintf(b, ", %d other", other)
		}
		fmt.Fprintf(b, "; %d without an end\n", s.Unended)
	}
	fmt.Fprintf(b, "  closed first   %s\n", orDash(s.FirstClose))
}

// sumOther counts the ends of a kind this version does not know.
func sumOther(ends map[string]int) int {
	n := 0
	for k, v := range ends {
		switch k {
		case EndEOF, EndReset, EndError, EndClosed:
		default:
			n += v
		}
	}
	return n
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
