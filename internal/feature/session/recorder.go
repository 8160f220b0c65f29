// This file writes a terminal session as an asciicast v2 file (the
// format asciinema plays): a JSON header line (version, width, height,
// timestamp, command), then one JSON array per event: [seconds, "o", text]
// for output, [seconds, "i", text] for input (only when asked: input holds
// passwords), [seconds, "r", "WxH"] for a resize. It knows terminals' bytes
// and sizes, not protocols or the CLI.

package session

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/crisp-cri/crisp/internal/base/outfile"
)

// Header is asciicast v2's first line.
type Header struct {
	Version   int               `json:"version"`
	Width     int               `json:"width"`
	Height    int               `json:"height"`
	Timestamp int64             `json:"timestamp"`
	Command   string            `json:"command,omitempty"`
	Title     string            `json:"title,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
}

// Default size when the session reports none (no terminal on stdout).
const (
	DefaultWidth  = 80
	DefaultHeight = 24
)

// RecordOptions say what to record.
type RecordOptions struct {
	// Command is the header's command (what was run, for the viewer).
	Command string
	// Input records what the user typed ("i" events). Off by default:
	// input holds passwords.
	Input bool
	// Env goes into the header (TERM and SHELL, as asciinema records).
	Env map[string]string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Recorder writes one asciicast. The header is written when the session's
// first size is known (Resize) or, failing that, before the first event,
// with the default size. Its methods are safe for concurrent use; a nil
// *Recorder records nothing.
type Recorder struct {
	opts RecordOptions
	f    *os.File
	bw   *bufio.Writer

	mu      sync.Mutex
	started bool
	start   time.Time
	pending []byte // an incomplete UTF-8 sequence at the end of the last output
	err     error
}

// NewRecorder makes a new recording at path (outfile.Create: mode 0600, a
// regular file there is replaced, anything else refused; a recording holds
// what was shown and maybe typed).
func NewRecorder(path string, opts RecordOptions) (*Recorder, error) {
	f, err := outfile.Create(path, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--record %w", err)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Recorder{opts: opts, f: f, bw: bufio.NewWriter(f)}, nil
}

// Resize records a terminal size: the first one sizes the header, later
// ones are "r" events.
func (r *Recorder) Resize(width, height int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.started {
		r.begin(width, height)
		return
	}
	r.event("r", strconv.Itoa(width)+"x"+strconv.Itoa(height))
}

// Output returns w with everything written to it recorded as "o" events.
func (r *Recorder) Output(w io.Writer) io.Writer {
	if r == nil {
		return w
	}
	return &tee{w: w, r: r}
}

// Input returns rd with what is read from it recorded as "i" events when
// the options ask for input; otherwise rd itself.
func (r *Recorder) Input(rd io.Reader) io.Reader {
	if r == nil || !r.opts.Input || rd == nil {
		return rd
	}
	return &inputTee{rd: rd, r: r}
}

// Close writes the header if nothing else did, flushes and closes the file.
func (r *Recorder) Close() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.started {
		r.begin(DefaultWidth, DefaultHeight)
	}
	if len(r.pending) > 0 {
		r.event("o", string(r.pending))
		r.pending = nil
	}
	err := errors.Join(r.err, r.bw.Flush(), r.f.Close())
	if err != nil {
		return fmt.Errorf("--record %s: %w", r.f.Name(), err)
	}
	return nil
}

// begin writes the header; r.mu is held.
func (r *Recorder) begin(width, height int) {
	r.started = true
	r.start = r.opts.Now()
	if width <= 0 || height <= 0 {
		width, height = DefaultWidth, DefaultHeight
	}
	h := Header{Version: 2, Width: width, Height: height, Timestamp: r.start.Unix(), Command: r.opts.Command, Env: r.opts.Env}
	r.writeJSON(h)
}

func (r *Recorder) output(p []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.started {
		r.begin(DefaultWidth, DefaultHeight)
	}
	// asciicast's text is JSON, hence UTF-8: hold back a sequence split
	// between two writes so it is not replaced by U+FFFD.
	data := append(r.pending, p...)
	cut := len(data)
	for i := len(data) - 1; i >= 0 && i >= len(data)-utf8.UTFMax; i-- {
		if utf8.RuneStart(data[i]) {
			if !utf8.FullRune(data[i:]) {
				cut = i
			}
			break
		}
	}
	r.pending = append([]byte(nil), data[cut:]...)
	if cut > 0 {
		r.event("o", string(data[:cut]))
	}
}

// event writes [t, kind, data]; r.mu is held.
func (r *Recorder) event(kind, data string) {
	secs := r.opts.Now().Sub(r.start).Seconds()
	r.writeJSON([]any{json.Number(strconv.FormatFloat(secs, 'f', 6, 64)), kind, data})
}

func (r *Recorder) writeJSON(v any) {
	line, err := json.Marshal(v)
	if err == nil {
		line = append(line, '\n')
		_, err = r.bw.Write(line)
	}
	if err == nil {
		err = r.bw.Flush() // a recording is read after crashes too
	}
	if err != nil && r.err == nil {
		r.err = err
	}
}

type tee struct {
	w io.Writer
	r *Recorder
}

func (t *tee) Write(p []byte) (int, error) {
	t.r.output(p)
	return t.w.Write(p)
}

type inputTee struct {
	rd io.Reader
	r  *Recorder
}

func (t *inputTee) Read(p []byte) (int, error) {
	n, err := t.rd.Read(p)
	if n > 0 {
		t.r.mu.Lock()
		if !t.r.started {
			t.r.begin(DefaultWidth, DefaultHeight)
		}
		t.r.event("i", string(p[:n]))
		t.r.mu.Unlock()
	}
	return n, err
}
