package cmdutil

import (
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
)

// Verb is the base of a command's options, after the command skeleton:
// Complete keeps the factory and the arguments, Validate accepts, Run is
// the command's. Every command that talks to the runtime through the
// factory embeds it (the streaming ones hold session.Deps, made from the
// same factory, instead) and binds its flags.
type Verb struct {
	F    *Factory
	Path string // the command's path, for messages: "crisp stop"
	Args []string
	// CancelTimeout bounds each request, like crictl's --cancel-timeout
	// (0: --request-timeout); only the verbs that have the flag set it.
	CancelTimeout time.Duration
}

// Complete keeps the factory (unless a test set one), the command's path
// and the arguments.
func (v *Verb) Complete(f *Factory, cmd *cobra.Command, args []string) error {
	if v.F == nil {
		v.F = f
	}
	v.Args = args
	if cmd != nil { // tests complete options without a command
		v.Path = cmd.CommandPath()
	}
	return nil
}

// Validate accepts: the positional checks are cobra's Args.
func (v *Verb) Validate() error { return nil }

// RefsOrAll is the Validate of the verbs that take references or -a.
func (v *Verb) RefsOrAll(all bool, what string) error {
	if all == (len(v.Args) > 0) {
		return UsageErrorf("%s takes %s... or -a, not both nor neither", v.Path, what)
	}
	return nil
}

// WithRuntime dials the runtime (each call bounded by CancelTimeout when it
// is set), runs fn, and closes the client.
func (v *Verb) WithRuntime(fn func(c *client.Client) error) error {
	c, err := v.F.Client()
	if err != nil {
		return err
	}
	defer func() { _ = c.Close() }() // nothing left to lose once fn is done
	if v.CancelTimeout > 0 {
		c.Timeout = v.CancelTimeout
	}
	return fn(c)
}

// Out is the output stream; ErrOut the error stream.
func (v *Verb) Out() io.Writer    { return v.F.Streams.Out }
func (v *Verb) ErrOut() io.Writer { return v.F.Streams.ErrOut }

// ArgsRange is cobra's RangeArgs with a usage error that says what is
// wanted; hi < 0 means no upper bound.
func ArgsRange(lo, hi int, want string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < lo || (hi >= 0 && len(args) > hi) {
			return UsageErrorf("%s takes %s", cmd.CommandPath(), want)
		}
		return nil
	}
}
