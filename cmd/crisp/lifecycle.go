package main

import (
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/lifecycle"
	"github.com/crisp-cri/crisp/internal/query"
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

// verb is the base of the lifecycle verbs' options, after the command
// skeleton (commandOptions): Complete keeps the factory and the arguments,
// Validate accepts, Run is the verb's. A verb embeds it and binds its flags.
type verb struct {
	f    *factory
	path string // the command's path, for messages: "crisp stop"
	args []string
	// CancelTimeout bounds each request, like crictl's --cancel-timeout
	// (0: --request-timeout); only the verbs that have the flag set it.
	CancelTimeout time.Duration
}

func (v *verb) Complete(f *factory, cmd *cobra.Command, args []string) error {
	if v.f == nil {
		v.f = f
	}
	v.path, v.args = cmd.CommandPath(), args
	return nil
}

func (v *verb) Validate() error { return nil }

// refsOrAll is the Validate of the verbs that take references or -a.
func (v *verb) refsOrAll(all bool, what string) error {
	if all == (len(v.args) > 0) {
		return usageErrorf("%s takes %s... or -a, not both nor neither", v.path, what)
	}
	return nil
}

// withRuntime dials the runtime (each call bounded by CancelTimeout when it
// is set), runs fn, and closes the client.
func (v *verb) withRuntime(fn func(c *client.Client) error) error {
	c, err := v.f.Client()
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }() // nothing left to lose once fn is done
	if v.CancelTimeout > 0 {
		c.Timeout = v.CancelTimeout
	}
	return fn(c)
}

func (v *verb) out() io.Writer    { return v.f.Streams.Out }
func (v *verb) errOut() io.Writer { return v.f.Streams.ErrOut }

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
	verb
	lifecycle.Pull
	NoPull, WithPull bool
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

// validate sets the pull policy from the flags; def is the verb's default.
func (p *pullFlags) validate(def lifecycle.PullPolicy) error {
	p.Password, p.Prompt = p.f.Streams.In, p.f.Streams.ErrOut
	switch {
	case p.Creds != "" && p.Auth != "":
		return usageErrorf("%v", query.ErrCredsAndAuth)
	case p.NoPull && p.WithPull:
		return usageErrorf("--no-pull and --with-pull contradict each other")
	case p.NoPull:
		p.Policy = lifecycle.PullNever
	case p.WithPull:
		p.Policy = lifecycle.PullAlways
	default:
		p.Policy = def
	}
	return nil
}
