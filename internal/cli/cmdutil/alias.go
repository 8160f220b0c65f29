package cmdutil

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"
)

// Alias adds name to fs as a second, hidden name of the flag target
// (crictl's --pt for --pull-timeout, --tls-sni for --tls-server-name):
// both set the same value.
func Alias(fs *pflag.FlagSet, name, target string) {
	f := *fs.Lookup(target)
	f.Name, f.Shorthand, f.Hidden = name, "", true
	fs.AddFlag(&f)
}

// Seconds is a duration flag that also takes a plain number of seconds,
// as crictl's integer flags do (exec --timeout 2), besides Go's "2s".
type Seconds time.Duration

// String is the duration in Go's notation.
func (s *Seconds) String() string { return time.Duration(*s).String() }

// Type names the value in help.
func (s *Seconds) Type() string { return "seconds" }

// Set takes "2", "1.5" (seconds) or a Go duration ("2s", "500ms").
func (s *Seconds) Set(v string) error {
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		*s = Seconds(n * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("want seconds (2) or a duration (2s, 500ms), not %q", v)
	}
	*s = Seconds(d)
	return nil
}
