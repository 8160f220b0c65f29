package probe

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzMillisJSON: a report's milliseconds read back without panicking, and
// what Millis writes reads back to the same value (to the microsecond).
func FuzzMillisJSON(f *testing.F) {
	for _, s := range []string{"12.5", "0", "-1", "1e300", `"3"`, "null", "9.3e12"} {
		f.Add([]byte(s), int64(1500))
	}
	f.Fuzz(func(t *testing.T, data []byte, d int64) {
		var m Millis
		_ = m.UnmarshalJSON(data) // any input: an error or a value, never a panic

		in := Millis(d)
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("Marshal(%d): %v", d, err)
		}
		var out Millis
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("Unmarshal(%s) of Marshal(%d): %v", b, d, err)
		}
		// Microseconds survive the float64 round trip while they fit its
		// 53-bit mantissa.
		if us := d / 1000; us > -(1<<52) && us < 1<<52 {
			if diff := int64(out)/1000 - us; diff < -1 || diff > 1 {
				t.Fatalf("Millis %d wrote %s, read back %d", d, b, int64(out))
			}
		}
	})
}

// FuzzRemoteOutcome reads arbitrary error-channel bytes as each framing
// would: never a panic, nil only for nothing or a v4/v5 Success status.
func FuzzRemoteOutcome(f *testing.F) {
	for _, s := range []string{
		`{"status":"Success"}`,
		`{"status":"Failure","message":"command terminated with non-zero exit code","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"7"}]}}`,
		`{"status":"Failure","details":{"causes":[{"reason":"ExitCode","message":"99999999999999999999"}]}}`,
		"command terminated with non-zero exit code: exit code 3",
		"exit status 99999999999999999999",
		"not json",
	} {
		f.Add([]byte(s))
	}
	protocols := []Protocol{{WebSocket, ProtoV5}, {WebSocket, ProtoV4}, {WebSocket, ProtoV1}, {WebSocket, ProtoBase64}, {SPDY, ProtoV3}}
	f.Fuzz(func(t *testing.T, text []byte) {
		for _, p := range protocols {
			err := remoteOutcome(p, text)
			if err == nil && len(text) > 0 {
				var st struct {
					Status string `json:"status"`
				}
				if json.Unmarshal(text, &st) != nil || st.Status != "Success" || (p.Name != ProtoV5 && p.Name != ProtoV4) {
					t.Fatalf("remoteOutcome(%v, %q) = nil: want an error for anything but a v4/v5 Success", p, text)
				}
			}
			var exit *wsExitError
			if errors.As(err, &exit) && exit.Error() == "" && len(text) > 0 && p.Name != ProtoV5 && p.Name != ProtoV4 {
				t.Fatalf("remoteOutcome(%v, %q) lost the text", p, text)
			}
		}
	})
}
