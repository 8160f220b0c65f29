package probe

import (
	"encoding/json"
	"time"
)

// Outcome is the verdict of one check.
type Outcome string

// Check outcomes. Warn is a defect that does not fail the run (smoke: on a
// transport auto does not pick).
const (
	Pass Outcome = "pass"
	Fail Outcome = "fail"
	Skip Outcome = "skip"
	Warn Outcome = "warn"
)

// Check is one functional check and what was seen.
type Check struct {
	Name    string  `json:"name"`
	Outcome Outcome `json:"outcome"`
	// Detail says what was seen (on failure: expected and got) or, for a
	// skipped check, why.
	Detail string `json:"detail,omitempty"`
}

// Millis is a duration that reads as milliseconds in JSON.
type Millis time.Duration

// MarshalJSON writes the duration in milliseconds, to 0.001 ms.
func (m Millis) MarshalJSON() ([]byte, error) {
	ms := float64(time.Duration(m).Microseconds()) / 1000
	return json.Marshal(ms)
}

// UnmarshalJSON reads milliseconds.
func (m *Millis) UnmarshalJSON(b []byte) error {
	var ms float64
	if err := json.Unmarshal(b, &ms); err != nil {
		return err
	}
	*m = Millis(time.Duration(ms * float64(time.Millisecond)))
	return nil
}

// String prints the duration rounded for tables.
func (m Millis) String() string {
	d := time.Duration(m)
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}
