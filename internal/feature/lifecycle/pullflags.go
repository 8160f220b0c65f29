package lifecycle

import (
	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

// PullFlags are create's and run's image pull flags, crictl's names.
type PullFlags struct {
	cmdutil.Verb
	Pull
	NoPull, WithPull bool
}

// Bind binds the pull flags to fs.
func (p *PullFlags) Bind(fs *pflag.FlagSet) {
	fs.BoolVar(&p.NoPull, "no-pull", false, "do not pull the image")
	fs.BoolVar(&p.WithPull, "with-pull", false, "pull the image even when the runtime has it")
	fs.StringVar(&p.Creds, "creds", "", "registry credentials USERNAME[:PASSWORD]")
	fs.StringVar(&p.Auth, "auth", "", "registry credentials as base64 of USERNAME:PASSWORD")
	fs.StringVarP(&p.Username, "username", "u", "", "registry user; the password is read from stdin")
	fs.DurationVar(&p.Timeout, "pull-timeout", 0, "longest a pull may take (0: no limit beyond --request-timeout)")
	fs.DurationVarP(&p.CancelTimeout, "cancel-timeout", "T", 0, "cancel each request after this long (default --request-timeout)")
}

// ValidatePull sets the pull policy from the flags; def is the verb's
// default.
func (p *PullFlags) ValidatePull(def PullPolicy) error {
	p.Password, p.Prompt = p.F.Streams.In, p.F.Streams.ErrOut
	switch {
	case p.Creds != "" && p.Auth != "":
		return cmdutil.UsageErrorf("%v", query.ErrCredsAndAuth)
	case p.NoPull && p.WithPull:
		return cmdutil.UsageErrorf("--no-pull and --with-pull contradict each other")
	case p.NoPull:
		p.Policy = PullNever
	case p.WithPull:
		p.Policy = PullAlways
	default:
		p.Policy = def
	}
	return nil
}
