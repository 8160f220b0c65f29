package remotecommand

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"
)

// byteStream is an error stream that carries data, handed out in reads of
// at most step bytes.
type byteStream struct {
	r     *bytes.Reader
	step  int
	reset bool
}

func (s *byteStream) Read(p []byte) (int, error) {
	if s.reset {
		return 0, io.EOF
	}
	return s.r.Read(p[:min(len(p), s.step)])
}
func (s *byteStream) Write(p []byte) (int, error) { return len(p), nil }
func (s *byteStream) Close() error                { return nil }
func (s *byteStream) Reset() error                { s.reset = true; return nil }
func (s *byteStream) Headers() http.Header        { return http.Header{"Streamtype": {"error"}} }
func (s *byteStream) Identifier() uint32          { return 1 }

// FuzzStatusBound reads arbitrary error streams, in arbitrary read sizes,
// as client-go does (io.ReadAll): a stream within maxStatus arrives whole,
// a longer one is cut at maxStatus with errStatusTooLong, and never more
// than maxStatus comes out.
func FuzzStatusBound(f *testing.F) {
	f.Add([]byte(`{"metadata":{},"status":"Success"}`), uint16(512), uint32(0))
	f.Add([]byte("x"), uint16(1), uint32(maxStatus))
	f.Add([]byte("exit code 7"), uint16(7), uint32(maxStatus-3))
	f.Add([]byte{}, uint16(0), uint32(1<<20))
	f.Fuzz(func(t *testing.T, head []byte, step uint16, pad uint32) {
		// pad spreads the input past the bound without a fuzzer-sized input.
		data := append(bytes.Repeat([]byte{'p'}, int(pad%(2*maxStatus))), head...)
		w := &statusWatch{}
		s := &watchedStream{Stream: &byteStream{r: bytes.NewReader(data), step: max(int(step), 1)}, watch: w}
		got, err := io.ReadAll(s)
		if len(got) > maxStatus {
			t.Fatalf("%d bytes came out, past the %d bound", len(got), maxStatus)
		}
		if len(data) > maxStatus {
			if !errors.Is(err, errStatusTooLong) || !bytes.Equal(got, data[:maxStatus]) {
				t.Fatalf("%d bytes in: got %d, err %v; want the first %d and errStatusTooLong", len(data), len(got), err, maxStatus)
			}
			return
		}
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes in: got %d, err %v; want them whole", len(data), len(got), err)
		}
	})
}
