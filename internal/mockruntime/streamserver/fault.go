package streamserver

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The fault kinds ParseFault knows.
const (
	FaultDropAfter             = "drop-after"
	FaultDelay                 = "delay"
	FaultRefuseUpgrade         = "refuse-upgrade"
	FaultKillStreamServerAfter = "kill-stream-server-after"
	FaultResetForwardConn      = "reset-forward-conn"
	FaultWithholdStatus        = "withhold-status"
	FaultRefuseConnOneIn       = "refuse-conn-one-in"
)

// faultForms is what an error message shows a user who typed a bad fault.
const faultForms = "drop-after=BYTES, delay=DURATION, refuse-upgrade, kill-stream-server-after=DURATION, restart-stream-server-after=DURATION, reset-forward-conn=N, refuse-conn-one-in=N, withhold-status"

// String formats f as ParseFault reads it.
func (f Fault) String() string {
	switch f.Kind {
	case FaultDropAfter:
		return fmt.Sprintf("%s=%d", f.Kind, f.Bytes)
	case FaultDelay, FaultKillStreamServerAfter, FaultRestartStreamServerAfter:
		return fmt.Sprintf("%s=%s", f.Kind, f.Duration)
	case FaultResetForwardConn, FaultRefuseConnOneIn:
		return fmt.Sprintf("%s=%d", f.Kind, f.N)
	default:
		return f.Kind
	}
}

func parseFault(s string) (Fault, error) {
	kind, value, hasValue := strings.Cut(s, "=")
	bad := func(format string, args ...any) (Fault, error) {
		return Fault{}, fmt.Errorf("fault %q: %s (faults: %s)", s, fmt.Sprintf(format, args...), faultForms)
	}
	needValue := func() error {
		if !hasValue || value == "" {
			return fmt.Errorf("%s needs a value", kind)
		}
		return nil
	}
	switch kind {
	case FaultDropAfter:
		if err := needValue(); err != nil {
			return bad("%v", err)
		}
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < 0 || !isDigits(value) {
			return bad("BYTES must be a non-negative whole number, got %q", value)
		}
		return Fault{Kind: kind, Bytes: n}, nil
	case FaultDelay, FaultKillStreamServerAfter, FaultRestartStreamServerAfter:
		if err := needValue(); err != nil {
			return bad("%v", err)
		}
		d, err := time.ParseDuration(value)
		if err != nil {
			return bad("DURATION must be a Go duration such as 200ms or 2s, got %q", value)
		}
		if d < 0 {
			return bad("DURATION must not be negative, got %q", value)
		}
		return Fault{Kind: kind, Duration: d}, nil
	case FaultRefuseUpgrade, FaultWithholdStatus:
		if hasValue {
			return bad("%s takes no value", kind)
		}
		return Fault{Kind: kind}, nil
	case FaultResetForwardConn, FaultRefuseConnOneIn:
		if err := needValue(); err != nil {
			return bad("%v", err)
		}
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || !isDigits(value) {
			return bad("N must be a whole number from 1, got %q", value)
		}
		return Fault{Kind: kind, N: n}, nil
	case "":
		return bad("empty fault kind")
	default:
		return bad("unknown fault kind %q", kind)
	}
}

// isDigits reports whether s is ASCII digits only (no sign, no spaces), so
// that "+5" or "0x10" are refused rather than read by a lenient parser.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// validate checks a Fault built by hand rather than by ParseFault.
func (f Fault) validate() error {
	switch f.Kind {
	case FaultDropAfter:
		if f.Bytes < 0 {
			return fmt.Errorf("fault %s: negative byte count", f.Kind)
		}
	case FaultDelay, FaultKillStreamServerAfter, FaultRestartStreamServerAfter:
		if f.Duration < 0 {
			return fmt.Errorf("fault %s: negative duration", f.Kind)
		}
	case FaultResetForwardConn, FaultRefuseConnOneIn:
		if f.N < 1 {
			return fmt.Errorf("fault %s: N must be 1 or more", f.Kind)
		}
	case FaultRefuseUpgrade, FaultWithholdStatus:
	default:
		return fmt.Errorf("unknown fault kind %q (faults: %s)", f.Kind, faultForms)
	}
	return nil
}

// faultSet is Config.Faults in the shape the server consults.
type faultSet struct {
	dropAfter     int64 // -1: none
	delay         time.Duration
	refuseUpgrade bool
	killAfter     time.Duration // -1: none
	restartAfter  time.Duration // -1: none (restart.go)
	resetForward  int           // 0: none
	refuseOneIn   int           // 0: none
	// withholdStatus: an exec's output ends, its status never comes.
	withholdStatus bool
}

func newFaultSet(faults []Fault) (faultSet, error) {
	fs := faultSet{dropAfter: -1, killAfter: -1, restartAfter: -1}
	seen := map[string]bool{}
	for _, f := range faults {
		if err := f.validate(); err != nil {
			return faultSet{}, err
		}
		if seen[f.Kind] {
			return faultSet{}, fmt.Errorf("fault %s given twice", f.Kind)
		}
		seen[f.Kind] = true
		switch f.Kind {
		case FaultDropAfter:
			fs.dropAfter = f.Bytes
		case FaultDelay:
			fs.delay = f.Duration
		case FaultRefuseUpgrade:
			fs.refuseUpgrade = true
		case FaultKillStreamServerAfter:
			fs.killAfter = f.Duration
		case FaultRestartStreamServerAfter:
			fs.restartAfter = f.Duration
		case FaultResetForwardConn:
			fs.resetForward = f.N
		case FaultWithholdStatus:
			fs.withholdStatus = true
		case FaultRefuseConnOneIn:
			fs.refuseOneIn = f.N
		}
	}
	return fs, nil
}
