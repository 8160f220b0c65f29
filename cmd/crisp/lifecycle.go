package main

import (
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/lifecycle"
)

// groupLifecycle holds crictl's verbs that make, change and remove pods
// and containers, and logs.
const groupLifecycle = "lifecycle"

// lifecycleExit is the EXIT STATUS of the lifecycle verbs.
const lifecycleExit = `

EXIT STATUS
  0  done
  1  failure: the runtime refused or could not be reached, a container or
     pod matched nothing or several (the candidates are listed), or a
     config file is malformed (its file and line are named)
  2  bad flags or arguments`

// withRuntime dials the runtime (each call bounded by timeout when it is
// set, like crictl's --cancel-timeout), runs fn, and closes the client.
func withRuntime(f *factory, timeout time.Duration, fn func(c *client.Client) error) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }() // nothing left to lose once fn is done
	if timeout > 0 {
		c.Timeout = timeout
	}
	return fn(c)
}

// argsRange is cobra's RangeArgs with a usage error that says what is wanted.
func argsRange(lo, hi int, want string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < lo || (hi >= 0 && len(args) > hi) {
			return usageErrorf("%s takes %s", cmd.CommandPath(), want)
		}
		return nil
	}
}

// pullFlags are create's and run's image pull flags, crictl's names.
type pullFlags struct {
	lifecycle.Pull
	NoPull, WithPull bool
	CancelTimeout    time.Duration
}

func (p *pullFlags) bind(fs *pflag.FlagSet) {
	fs.BoolVar(&p.NoPull, "no-pull", false, "do not pull the image")
	fs.BoolVar(&p.WithPull, "with-pull", false, "pull the image even when the runtime has it")
	fs.StringVar(&p.Creds, "creds", "", "registry credentials USERNAME[:PASSWORD]")
	fs.StringVar(&p.Auth, "auth", "", "registry credentials as base64 of USERNAME:PASSWORD")
	fs.StringVarP(&p.Username, "username", "u", "", "registry user; the password is read from stdin")
	fs.DurationVar(&p.Timeout, "pull-timeout", 0, "longest a pull may take (0: no limit beyond --request-timeout)")
	fs.DurationVarP(&p.CancelTimeout, "cancel-timeout", "T", 0, "cancel each request after this long (default --request-timeout)")
}

// policy turns the flags into a pull policy; def is the verb's default.
func (p *pullFlags) policy(f *factory, def lifecycle.PullPolicy) (lifecycle.Pull, error) {
	out := p.Pull
	out.Password, out.Prompt = f.Streams.In, f.Streams.ErrOut
	switch {
	case p.NoPull && p.WithPull:
		return out, usageErrorf("--no-pull and --with-pull contradict each other")
	case p.NoPull:
		out.Policy = lifecycle.PullNever
	case p.WithPull:
		out.Policy = lifecycle.PullAlways
	default:
		out.Policy = def
	}
	return out, nil
}
