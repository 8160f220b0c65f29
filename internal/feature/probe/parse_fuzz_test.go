package probe

import (
	"encoding/json"
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
