package remotecommand

import (
	"errors"
	"io"
	"sync"
)

// frameSource is a stream that hands out whole received frames: spdystream's
// Stream (ReadData). Reading it through Read costs a copy of every byte
// into the reader's buffer and, for frames larger than that buffer, several
// writes per frame.
type frameSource interface {
	ReadData() ([]byte, error)
}

// frameWriter is a session's stdout or stderr. client-go copies each remote
// output stream into it with io.Copy, which hands the copy to ReadFrom: from
// a SPDY stream the frames then go to w as they arrived, one write per
// frame and no intermediate copy. Any other source is copied as io.Copy
// would.
type frameWriter struct {
	w io.Writer
}

// newFrameWriter wraps w; nil stays nil (the stream is not requested).
func newFrameWriter(w io.Writer) io.Writer {
	if w == nil {
		return nil
	}
	return &frameWriter{w: w}
}

func (f *frameWriter) Write(p []byte) (int, error) { return f.w.Write(p) }

// copyBuffers backs the copy of sources that are not frame sources.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// ReadFrom implements io.ReaderFrom.
func (f *frameWriter) ReadFrom(r io.Reader) (int64, error) {
	src, ok := r.(frameSource)
	if !ok {
		buf := copyBuffers.Get().(*[]byte)
		defer copyBuffers.Put(buf)
		// writerOnly hides ReadFrom: io.CopyBuffer must not call back here.
		return io.CopyBuffer(writerOnly{f.w}, r, *buf)
	}
	var total int64
	for {
		data, err := src.ReadData()
		if len(data) > 0 {
			n, werr := f.w.Write(data)
			total += int64(n)
			if werr != nil {
				return total, werr
			}
			if n < len(data) {
				return total, io.ErrShortWrite
			}
		}
		if errors.Is(err, io.EOF) {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

type writerOnly struct{ io.Writer }
