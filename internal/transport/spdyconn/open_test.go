package spdyconn

import (
	"errors"
	"strings"
	"testing"
)

// A connection kind Open does not know is refused naming the variable and
// the kinds it takes; $CRISP_SPDY picks the kind when the caller names none.
func TestOpenUnknownKind(t *testing.T) {
	nc, _ := tcpPair(t)
	for _, tc := range []struct{ kind, env string }{{"bogus", ""}, {"", "bogus"}} {
		t.Setenv(EnvKind, tc.env)
		_, err := Open(nc, nil, Options{Kind: tc.kind})
		if !errors.Is(err, ErrUnknownKind) || !strings.Contains(err.Error(), EnvKind) || !strings.Contains(err.Error(), KindSpdystream) {
			t.Errorf("Open(kind %q, %s=%q): %v, want ErrUnknownKind naming %s and the kinds", tc.kind, EnvKind, tc.env, err, EnvKind)
		}
	}
}
