package doctor

import (
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"
)

// TestSignature: typed errors are classed by their type wherever the
// words that wrap them put it, words only when no type is left.
func TestSignature(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{io.EOF, sigEOF},
		{fmt.Errorf("reading the status: %w (after 3 frames)", io.ErrUnexpectedEOF), sigEOF},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), sigRefused},
		{errors.New("rpc error: code = Unavailable desc = connection error: dial unix /run/x.sock: connect: no such file or directory"), sigNoSocket},
		{errors.New("stream ended: unexpected EOF"), sigEOF},
		{errors.New("something else"), sigOther},
	} {
		if got := signature(tc.err); got != tc.want {
			t.Errorf("signature(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
