package client

import (
	"errors"
	"testing"
)

// A container's PID comes from the verbose info as containerd and CRI-O
// give it ("info"), else from another key that has one; anything else is
// ErrNoPID.
func TestInfoPID(t *testing.T) {
	for _, tc := range []struct {
		info map[string]string
		want int
	}{
		{map[string]string{"info": `{"sandboxID":"x","pid":4242,"runtimeSpec":{}}`}, 4242},
		{map[string]string{"other": `{"pid":7}`, "info": `{"pid":4242}`}, 4242},
		{map[string]string{"b": `{"pid":9}`, "a": `not json`}, 9},
	} {
		if pid, err := InfoPID(tc.info); err != nil || pid != tc.want {
			t.Errorf("InfoPID(%v) = %d, %v; want %d", tc.info, pid, err, tc.want)
		}
	}
	for _, info := range []map[string]string{nil, {"info": "{"}, {"info": `{"pid":0}`}, {"x": `{"pid":-1}`}} {
		if _, err := InfoPID(info); !errors.Is(err, ErrNoPID) {
			t.Errorf("InfoPID(%v) = %v, want ErrNoPID", info, err)
		}
	}
}
