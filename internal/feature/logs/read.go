package logs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Options are crictl's (and kubectl's) log options.
type Options struct {
	// Follow keeps reading as the container writes, until it stops.
	Follow bool
	// Tail is the number of lines to show from the end; negative means all.
	Tail int64
	// LimitBytes stops after that many bytes; negative means no limit.
	LimitBytes int64
	// Since skips lines older than this (zero: none).
	Since time.Time
	// Timestamps prefixes each line with its time.
	Timestamps bool
	// Stream keeps only Stdout or Stderr; empty keeps both.
	Stream string
}

// Running reports whether the container still runs: following stops at the
// end of the log once it does not.
type Running func(ctx context.Context) (bool, error)

// PollInterval is how often a follower looks for new lines and rotation
// when the file has nothing more (kubelet waits on inotify with a 1 s
// check; a short poll needs no watcher and costs a stat).
var PollInterval = 100 * time.Millisecond

// errLimit ends a read that reached Options.LimitBytes.
var errLimit = errors.New("byte limit reached")

// Read copies the log at path to stdout and stderr (by each line's stream)
// as opts say. While following it survives rotation: when the runtime
// moves the file away and opens a new one at path, the rest of the old
// file is read, then the files rotated after it (several rotations can
// pass between two looks), then the new one from its start; a rotated
// file removed before it was read is named on stderr.
func Read(ctx context.Context, path string, opts Options, running Running, stdout, stderr io.Writer) error {
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		path = resolved
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("opening log file: %w", err)
	}
	defer func() { _ = f.Close() }() // read-only: nothing to lose
	start, err := tailStart(f, opts.Tail)
	if err != nil {
		return fmt.Errorf("finding the last %d lines of %s: %w", opts.Tail, path, err)
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return fmt.Errorf("seeking in %s: %w", path, err)
	}
	w := &writer{opts: opts, stdout: stdout, stderr: stderr, remain: math.MaxInt64, newLine: true}
	if opts.LimitBytes >= 0 {
		w.remain = opts.LimitBytes
	}
	if w.remain == 0 {
		return nil
	}
	lines := int64(-1) // lines left to print when not following
	if opts.Tail >= 0 && !opts.Follow {
		lines = opts.Tail
	}
	var rot *rotation
	if opts.Follow {
		rot = newRotation(path)
	}
	r := bufio.NewReader(f)
	var pending []byte // an incomplete last line, completed by the next read
	stopping := false  // the container stopped: read to the end, then return
	for lines != 0 {
		chunk, err := r.ReadBytes('\n')
		pending = append(pending, chunk...)
		if err == nil {
			if err := w.line(pending); err != nil {
				return done(err)
			}
			pending = pending[:0]
			if lines > 0 {
				lines--
			}
			continue
		}
		if !errors.Is(err, io.EOF) {
			return fmt.Errorf("reading %s: %w", path, err)
		}
		if opts.Follow {
			if next, rotated := reopenIfRotated(path, f); rotated {
				// The runtime writes to next now: what it wrote to f before
				// switching is there, read it to the end first; then the
				// files rotated in between, if the log turned over more
				// than once since the last look.
				err := readRest(r, w, &pending)
				if err == nil {
					err = rot.passedOver(f, next, w, &pending, stderr)
				}
				_ = f.Close() // read-only: nothing to lose
				f = next
				if err != nil {
					return done(err)
				}
				r = bufio.NewReader(f)
				continue
			}
		}
		if !opts.Follow || stopping {
			// As kubelet does, an unfinished last line is shown as is.
			if len(pending) > 0 {
				return done(w.line(pending))
			}
			return nil
		}
		run, err := running(ctx)
		if err != nil {
			return err
		}
		if !run {
			stopping = true
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(PollInterval):
		}
	}
	return nil
}

func done(err error) error {
	if errors.Is(err, errLimit) {
		return nil
	}
	return err
}

// reopenIfRotated opens path when it now names another file than f (the
// runtime rotated the log and reopened it).
func reopenIfRotated(path string, f *os.File) (*os.File, bool) {
	cur, err := f.Stat()
	if err != nil {
		return nil, false
	}
	now, err := os.Stat(path)
	if err != nil || os.SameFile(cur, now) {
		return nil, false
	}
	next, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	return next, true
}

// writer prints messages as the options say.
type writer struct {
	opts           Options
	stdout, stderr io.Writer
	remain         int64
	// newLine: the last message ended a line, so the next one starts one
	// (and gets a timestamp).
	newLine bool
	// last is the time of the last line read, for warnings.
	last time.Time
}

func (w *writer) line(raw []byte) error {
	msg, err := ParseLine(raw)
	if err != nil {
		// kubelet skips what it cannot parse and goes on.
		return nil
	}
	w.last = msg.Time
	if msg.Time.Before(w.opts.Since) {
		return nil
	}
	startsLine := w.newLine
	w.newLine = len(msg.Content) == 0 || msg.Content[len(msg.Content)-1] == '\n'
	if w.opts.Stream != "" && msg.Stream != w.opts.Stream {
		return nil
	}
	out := msg.Content
	if w.opts.Timestamps && startsLine {
		out = append([]byte(msg.Time.Format(timeFormatOut)+" "), out...)
	}
	if int64(len(out)) > w.remain {
		out = out[:w.remain]
	}
	dst := w.stdout
	if msg.Stream == Stderr {
		dst = w.stderr
	}
	if dst == nil {
		return nil
	}
	n, err := dst.Write(out)
	w.remain -= int64(n)
	if err != nil {
		return err
	}
	if w.remain <= 0 {
		return errLimit
	}
	return nil
}

// tailStart is the offset where the last n lines of f start (0 for all of
// it when n is negative or the file has fewer lines). A last line without
// its "\n" counts as a line, as kubelet counts it.
func tailStart(f *os.File, n int64) (int64, error) {
	if n < 0 {
		return 0, nil
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := fi.Size()
	if n == 0 {
		return size, nil
	}
	const block = 4096
	buf := make([]byte, block)
	end := size // scan [0, end) backwards
	var last [1]byte
	if size > 0 {
		if _, err := f.ReadAt(last[:], size-1); err != nil {
			return 0, err
		}
		if last[0] == '\n' {
			end-- // the newline that ends the last line starts nothing
		}
	}
	count := int64(0)
	for pos := end; pos > 0; {
		step := min(int64(block), pos)
		pos -= step
		if _, err := f.ReadAt(buf[:step], pos); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		for i := step - 1; i >= 0; i-- {
			if buf[i] == '\n' {
				count++
				if count == n {
					return pos + i + 1, nil
				}
			}
		}
	}
	return 0, nil
}

// PreviousPath is the log of the container's previous attempt, as kubelet
// names them: <dir>/<attempt-1>.log next to <dir>/<attempt>.log.
func PreviousPath(logPath string, attempt uint32, name string) (string, error) {
	if attempt == 0 {
		return "", fmt.Errorf("previous terminated container %s not found (this is its first attempt)", name)
	}
	ext := filepath.Ext(logPath)
	return filepath.Join(filepath.Dir(logPath), strconv.FormatUint(uint64(attempt-1), 10)+ext), nil
}

// ParseSince reads --since as crictl does: a duration back from now (42m),
// an RFC 3339 time (2013-01-02T13:23:37Z, the zone optional: local time),
// a date, or Unix seconds (1136073600.000000001).
func ParseSince(value string, now time.Time) (time.Time, error) {
	if value == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(value); err == nil {
		if d < 0 {
			// "-5m" would mean five minutes from now: no line yet, silently.
			return time.Time{}, fmt.Errorf("--since %q: a duration counts back from now and cannot be negative (5m: the last five minutes)", value)
		}
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, value, time.Local); err == nil {
			return t, nil
		}
	}
	secs, frac, _ := strings.Cut(value, ".")
	if s, err := strconv.ParseInt(secs, 10, 64); err == nil {
		var ns int64
		if frac != "" {
			if len(frac) > 9 {
				frac = frac[:9]
			}
			frac += strings.Repeat("0", 9-len(frac))
			if ns, err = strconv.ParseInt(frac, 10, 64); err != nil {
				return time.Time{}, fmt.Errorf("--since %q: want a duration (42m), an RFC 3339 time or Unix seconds", value)
			}
		}
		return time.Unix(s, ns), nil
	}
	return time.Time{}, fmt.Errorf("--since %q: want a duration (42m), an RFC 3339 time (2013-01-02T13:23:37Z) or Unix seconds", value)
}
