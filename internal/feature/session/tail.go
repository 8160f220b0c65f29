package session

import (
	"errors"
	"io"

	"github.com/crisp-cri/crisp/internal/transport"
)

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

// startFailure reads err, an exec's outcome, with what was written: a
// remote exit status that is runc's failed exec (CRI-O's 255) becomes 127
// or 126 as on containerd; anything else is returned as it is.
func (t *tailWriter) startFailure(err error) error {
	var coded transport.RemoteExit
	if errors.As(err, &coded) {
		if notStarted, ok := transport.ExecFailure(coded.ExitStatus(), t.tail()); ok {
			return notStarted
		}
	}
	return err
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
