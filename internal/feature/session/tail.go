package session

import "io"

// tailKeep is how much of a stream's end tailWriter keeps: enough for a
// runtime's one-line reason.
const tailKeep = 1024

// tailWriter passes writes on to w and keeps the last tailKeep bytes, so
// that an exec's status can be read with the last words the remote side
// wrote (transport.ExecFailure).
type tailWriter struct {
	w   io.Writer
	buf []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	t.buf = append(t.buf, p[:n]...)
	if len(t.buf) > tailKeep {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailKeep:]...)
	}
	return n, err
}

// tail is the end of what was written.
func (t *tailWriter) tail() []byte { return t.buf }

// tailOf is the end of b that tailWriter would keep.
func tailOf(b []byte) []byte {
	if len(b) > tailKeep {
		return b[len(b)-tailKeep:]
	}
	return b
}
