package mockruntime

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Stream names of the CRI log format.
const (
	streamStdout = "stdout"
	streamStderr = "stderr"
)

// maxLogLine is the longest line written as one record; longer ones are
// split into partial (P) records, as containerd does at 16 KiB.
const maxLogLine = 16 * 1024

// criLog writes a container's output to its log path in the CRI log format
// (`2006-01-02T15:04:05.999999999Z07:00 stdout F line`), which crictl logs
// and the kubelet read. A nil *criLog discards everything.
type criLog struct {
	mu      sync.Mutex
	f       *os.File
	pending map[string][]byte // per stream: bytes of a line not yet ended
}

// openCRILog creates path (and its folder); "" means no log.
func openCRILog(path string) (*criLog, error) {
	if path == "" {
		return nil, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return nil, err
	}
	return &criLog{f: f, pending: map[string][]byte{}}, nil
}

// write records p, output of stream; whole lines are written at once, a
// line's start waits for its end (or for maxLogLine bytes).
func (l *criLog) write(stream string, p []byte) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return
	}
	buf := append(l.pending[stream], p...)
	var out []byte
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		out = appendRecord(out, stream, "F", buf[:i])
		buf = buf[i+1:]
	}
	for len(buf) >= maxLogLine {
		out = appendRecord(out, stream, "P", buf[:maxLogLine])
		buf = buf[maxLogLine:]
	}
	l.pending[stream] = append([]byte(nil), buf...)
	if len(out) > 0 {
		_, _ = l.f.Write(out)
	}
}

// close writes unfinished lines as full records and closes the file.
func (l *criLog) close() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return
	}
	var out []byte
	for _, stream := range []string{streamStdout, streamStderr} {
		if len(l.pending[stream]) > 0 {
			out = appendRecord(out, stream, "F", l.pending[stream])
		}
	}
	if len(out) > 0 {
		_, _ = l.f.Write(out)
	}
	_ = l.f.Close()
	l.f = nil
}

func appendRecord(out []byte, stream, tag string, line []byte) []byte {
	out = time.Now().AppendFormat(out, time.RFC3339Nano)
	out = append(out, ' ')
	out = append(out, stream...)
	out = append(out, ' ')
	out = append(out, tag...)
	out = append(out, ' ')
	out = append(out, line...)
	return append(out, '\n')
}
