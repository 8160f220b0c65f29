package main

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/session"
	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/tty"
)

// attachOptions are `crisp attach`'s flags and arguments: they bind to
// session.Attach's fields, which Run hands to the session layer as they
// are.
type attachOptions struct {
	session.Attach

	// ttyGiven records, for Validate, whether -t was on the command line.
	ttyGiven bool
	deps     streamDeps
}

func newAttachCommand(f *cmdutil.Factory) *cobra.Command {
	return attachCommand(f, &attachOptions{Attach: session.Attach{ExitWait: attachExitWait}})
}

// attachExitWait is how long attach gives the runtime to record the exit of
// a container whose attach stream ended cleanly. The stream ends when the
// process's output closes, and the runtime records the exit only later:
// containerd handles exit events one at a time and deletes the task (a shim
// call and a runc run) before it updates the status, which takes 50-300 ms on
// an idle machine and more than a second on a loaded one (a 1 s bound
// reported exit 0 for `exit 5`). A stream that ends cleanly while the process
// runs on is rare (the process closed its output, say), so the bound is
// generous: only that case waits it out, and ctrl-c ends the wait.
const attachExitWait = 15 * time.Second

// attachCommand binds o to the command; o.deps, when set (tests), replaces
// the factory's dependencies.
func attachCommand(f *cmdutil.Factory, o *attachOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:         "attach [-i] [-t] [--detach-keys K] [--transport T] CONTAINER",
		Short:       "Attach to a running container's main process",
		Long:        helpLong("attach"),
		Example:     helpExample("attach"),
		Annotations: map[string]string{cmdutil.PassThroughAnnotation: "true"},
		Args:        cmdutil.ExactArgs(1, "exactly one CONTAINER"),
		RunE:        runOptions(f, o),
	}
	fl := cmd.Flags()
	fl.BoolVarP(&o.Stdin, "stdin", "i", false, "send stdin to the container")
	fl.BoolVarP(&o.TTY, "tty", "t", false, "the container has a TTY: raw local terminal, resize propagated")
	fl.StringVar(&o.DetachKeys, "detach-keys", tty.DefaultDetachKeys, `keys that detach (with -i); "" disables`)
	fl.StringVarP(&o.Transport, "transport", "r", string(transport.Auto), "streaming transport: auto, websocket or spdy")
	fl.StringVar(&o.Protocol, "protocol", "", "offer only this subprotocol, e.g. v4.channel.k8s.io (debugging)")
	fl.BoolVar(&o.ProtocolCache, "protocol-cache", true, session.ProtocolCacheUsage)
	o.TLS.AddFlags(fl)
	o.Trace.AddFlags(fl)
	o.Peer.AddFlags(fl)
	o.Record.AddFlags(fl)
	o.Reconnect.AddFlags(fl)
	return cmd
}

// Complete takes CONTAINER from the arguments.
func (o *attachOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	if o.deps.Stream == nil {
		o.deps = session.NewDeps(f)
	}
	o.ttyGiven = cmd.Flags().Changed("tty")
	if len(args) > 0 {
		o.Container = args[0]
	}
	return nil
}

// Validate rejects bad input before any connection is made.
func (o *attachOptions) Validate() error {
	if err := o.Record.Validate(o.ttyGiven); err != nil {
		return err
	}
	if err := o.Trace.Validate(); err != nil {
		return err
	}
	if err := o.Peer.Validate(); err != nil {
		return err
	}
	if o.Container == "" {
		return cmdutil.UsageErrorf("attach needs a CONTAINER")
	}
	var err error
	if o.Keys, err = tty.ParseDetachKeys(o.DetachKeys); err != nil {
		return cmdutil.UsageErrorf("--detach-keys: %v", err)
	}
	if o.Offers, err = session.ParseOffers(o.Transport, o.Protocol); err != nil {
		return err
	}
	return o.TLS.Validate()
}

// Run attaches until the process ends or the user detaches, with a failure
// to write the trace or the recording joined to its error.
func (o *attachOptions) Run(ctx context.Context) (err error) {
	defer func() { err = errors.Join(err, o.Trace.Close(), o.Record.Close()) }()
	return o.deps.Attach(ctx, &o.Attach)
}
