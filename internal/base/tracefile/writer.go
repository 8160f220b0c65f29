package tracefile

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/crisp-cri/crisp/internal/base/outfile"
)

// DefaultPayloadBytes is how much of each frame's payload a trace keeps
// unless told otherwise (--trace-bytes).
const DefaultPayloadBytes = 64

// Writer appends events to a trace file, one JSON line each. It is safe for
// concurrent use (port-forward traces many connections at once). A nil
// *Writer records nothing.
type Writer struct {
	mu       sync.Mutex
	f        *os.File
	bw       *bufio.Writer
	maxBytes int
	input    bool // keep what crisp sends on stdin (typed passwords!)
	sessions int
	err      error
}

// Create makes a new trace file at path (outfile.Create: mode 0600, a
// regular file there is replaced, anything else refused; a trace holds what
// was typed and shown), and keeps up to maxBytes of each frame's payload
// (negative: none). What crisp sends on stdin keeps its size only, unless
// input: a password typed at a terminal must not reach a file nobody asked
// it to.
func Create(path string, maxBytes int, input bool) (*Writer, error) {
	f, err := outfile.Create(path, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--trace-file %w", err)
	}
	return &Writer{f: f, bw: bufio.NewWriter(f), maxBytes: max(maxBytes, 0), input: input}, nil
}

// NewSession numbers a new session in the file.
func (w *Writer) NewSession() int {
	if w == nil {
		return 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sessions++
	return w.sessions
}

// Record writes one event: the time is filled in if zero, the URL redacted
// (and its secrets removed from the error and reason), the payload cut to
// the writer's limit, Size set from the payload when zero. Write errors are
// kept for Close.
func (w *Writer) Record(ev Event) {
	if w == nil {
		return
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	if ev.URL != "" {
		ev.Error = redactText(ev.Error, ev.URL)
		ev.Reason = redactText(ev.Reason, ev.URL)
		ev.URL = RedactURL(ev.URL)
	}
	if ev.Size == 0 {
		ev.Size = len(ev.Data)
	}
	if ev.Kind == KindFrame && ev.Stream == StreamStdin && !w.input {
		ev.Data = nil // its size stays: enough to follow the flow
	}
	if len(ev.Data) > w.maxBytes {
		ev.Data = ev.Data[:w.maxBytes]
	}
	ev.Truncated = ev.Kind == KindFrame && carriesPayload(ev.Stream) && len(ev.Data) < ev.Size
	line, err := json.Marshal(ev)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil {
		line = append(line, '\n')
		_, err = w.bw.Write(line)
	}
	if err == nil {
		// A trace is read after crashes too: flush every line.
		err = w.bw.Flush()
	}
	if err != nil && w.err == nil {
		w.err = err
	}
}

// Close flushes and closes the file, returning the first error met.
func (w *Writer) Close() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	err := errors.Join(w.err, w.bw.Flush(), w.f.Close())
	if err != nil {
		return fmt.Errorf("--trace-file %s: %w", w.f.Name(), err)
	}
	return nil
}

// carriesPayload tells the streams whose frames are bytes from the user or
// the process (not resize or status messages).
func carriesPayload(stream string) bool {
	switch stream {
	case StreamStdin, StreamStdout, StreamStderr, StreamData:
		return true
	}
	return false
}
