package cmdutil

import (
	"errors"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/transport"
)

// --peer-timeout: 60s by default, seconds or a duration, 0 turns the
// bound off (transport.Config's negative), negative is a usage error.
func TestPeerFlags(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		wantBound time.Duration
		usage     bool
	}{
		{args: nil, wantBound: transport.DefaultPeerTimeout},
		{args: []string{"--peer-timeout", "2"}, wantBound: 2 * time.Second},
		{args: []string{"--peer-timeout", "500ms"}, wantBound: 500 * time.Millisecond},
		{args: []string{"--peer-timeout", "0"}, wantBound: 0},
		{args: []string{"--peer-timeout", "-1s"}, usage: true},
	} {
		var o PeerFlags
		fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		err := o.Validate()
		if tc.usage {
			var usage UsageError
			if !errors.As(err, &usage) {
				t.Errorf("%q: Validate = %v, want a usage error", tc.args, err)
			}
			continue
		}
		var cfg transport.Config
		if err := Configure(o.Apply)(&cfg); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if got := cfg.PeerBound(); got != tc.wantBound {
			t.Errorf("%q: bound %v, want %v", tc.args, got, tc.wantBound)
		}
	}
}
