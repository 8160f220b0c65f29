package streamserver

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseFault(t *testing.T) {
	good := []struct {
		in   string
		want Fault
	}{
		{"drop-after=1000", Fault{Kind: FaultDropAfter, Bytes: 1000}},
		{"drop-after=0", Fault{Kind: FaultDropAfter, Bytes: 0}},
		{"delay=200ms", Fault{Kind: FaultDelay, Duration: 200 * time.Millisecond}},
		{"delay=0s", Fault{Kind: FaultDelay}},
		{"refuse-upgrade", Fault{Kind: FaultRefuseUpgrade}},
		{"kill-stream-server-after=2s", Fault{Kind: FaultKillStreamServerAfter, Duration: 2 * time.Second}},
		{"kill-stream-server-after=1m30s", Fault{Kind: FaultKillStreamServerAfter, Duration: 90 * time.Second}},
		{"reset-forward-conn=3", Fault{Kind: FaultResetForwardConn, N: 3}},
		{"refuse-conn-one-in=100", Fault{Kind: FaultRefuseConnOneIn, N: 100}},
		{"withhold-status", Fault{Kind: FaultWithholdStatus}},
	}
	for _, c := range good {
		got, err := ParseFault(c.in)
		if err != nil {
			t.Errorf("ParseFault(%q): %v", c.in, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("ParseFault(%q) (-want +got):\n%s", c.in, diff)
		}
	}
	bad := []struct{ in, mention string }{
		{"", "empty fault kind"},
		{"=5", "empty fault kind"},
		{"explode", "unknown fault kind"},
		{"drop-after", "needs a value"},
		{"drop-after=", "needs a value"},
		{"drop-after=-1", "non-negative"},
		{"drop-after=+5", "non-negative"},
		{"drop-after=1k", "non-negative"},
		{"drop-after=99999999999999999999", "non-negative"},
		{"delay", "needs a value"},
		{"delay=5", "Go duration"},
		{"delay=-1s", "negative"},
		{"refuse-upgrade=yes", "takes no value"},
		{"refuse-upgrade=", "takes no value"},
		{"withhold-status=1", "takes no value"},
		{"kill-stream-server-after=soon", "Go duration"},
		{"reset-forward-conn=0", "from 1"},
		{"refuse-conn-one-in=0", "from 1"},
		{"reset-forward-conn=1.5", "from 1"},
		{"reset-forward-conn= 2", "from 1"},
		{"DELAY=1s", "unknown fault kind"},
		{" delay=1s", "unknown fault kind"},
	}
	for _, c := range bad {
		_, err := ParseFault(c.in)
		if err == nil {
			t.Errorf("ParseFault(%q) succeeded", c.in)
			continue
		}
		if !strings.Contains(err.Error(), c.mention) || !strings.Contains(err.Error(), "drop-after=BYTES") {
			t.Errorf("ParseFault(%q) = %v: want it to mention %q and list the faults", c.in, err, c.mention)
		}
	}
}

// FuzzParseFault: ParseFault never panics, what it accepts is valid for
// New, and String gives back a spelling it parses to the same fault.
func FuzzParseFault(f *testing.F) {
	for _, s := range []string{"drop-after=1000", "delay=200ms", "refuse-upgrade", "kill-stream-server-after=2s", "reset-forward-conn=3", "", "x=y=z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fault, err := ParseFault(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if err := fault.validate(); err != nil {
			t.Fatalf("ParseFault(%q) = %+v, which New refuses: %v", s, fault, err)
		}
		again, err := ParseFault(fault.String())
		if err != nil {
			t.Fatalf("ParseFault(%q).String() = %q does not parse: %v", s, fault.String(), err)
		}
		if again != fault {
			t.Fatalf("round trip of %q: %+v then %+v", s, fault, again)
		}
	})
}
