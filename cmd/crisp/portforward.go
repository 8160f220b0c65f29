package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/session"
	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/transport/portforward"
)

// portForwardOptions are port-forward's flags and arguments: they bind to
// session.Forward's fields, which Run hands to the session layer as they
// are.
type portForwardOptions struct {
	session.Forward

	// specs are the [LOCAL:]REMOTE arguments, parsed into Mappings by
	// Validate.
	specs []string
	deps  portForwardDeps
}

// portForwardDeps are what port-forward needs from the world
// (session.ForwardDeps); tests replace them.
type portForwardDeps = session.ForwardDeps

func newPortForwardCommand(f *cmdutil.Factory) *cobra.Command {
	return portForwardCommand(f, &portForwardOptions{})
}

// portForwardCommand binds o to the command; o.deps, when set (tests),
// replaces the factory's dependencies.
func portForwardCommand(f *cmdutil.Factory, o *portForwardOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "port-forward [--address A,...] [--transport auto|spdy|websocket] POD [LOCAL:]REMOTE ...",
		Short:   "Forward local ports to a pod; a failed connection never stops the others",
		Long:    helpLong("port-forward"),
		Example: helpExample("port-forward"),
		Args:    cmdutil.AtLeastArgs(2, "a POD and at least one [LOCAL:]REMOTE port"),
		RunE:    runOptions(f, o),
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&o.Addresses, "address", []string{"localhost"}, "local addresses to listen on: IP addresses and localhost (127.0.0.1 and ::1), comma separated")
	fl.StringVarP(&o.Transport, "transport", "r", string(transport.Auto), "protocol family: auto, websocket or spdy")
	o.TLS.AddFlags(fl)
	o.Trace.AddFlags(fl)
	o.Peer.AddFlags(fl)
	return cmd
}

// Complete takes the pod and the port specifications, and the factory's
// dependencies (after -v is parsed) unless a test set them.
func (o *portForwardOptions) Complete(f *cmdutil.Factory, _ *cobra.Command, args []string) error {
	if o.deps.Dial == nil {
		o.deps = session.NewForwardDeps(f)
	}
	if len(args) > 0 {
		o.PodRef, o.specs = args[0], args[1:]
	}
	return nil
}

// Validate parses the port specifications and rejects bad input before any
// connection is made.
func (o *portForwardOptions) Validate() error {
	if err := o.Trace.Validate(); err != nil {
		return err
	}
	if err := o.Peer.Validate(); err != nil {
		return err
	}
	o.Mappings = nil
	for _, spec := range o.specs {
		m, err := portforward.ParsePortSpec(spec)
		if err != nil {
			return cmdutil.UsageError{Err: err}
		}
		o.Mappings = append(o.Mappings, m)
	}
	t, err := transport.ParseTransport(o.Transport)
	if err != nil {
		return cmdutil.UsageError{Err: err}
	}
	o.Family = t
	if o.PodRef == "" {
		return cmdutil.UsageErrorf("port-forward: empty POD")
	}
	if err := portforward.CheckListeners(o.Addresses, o.Mappings); err != nil {
		return cmdutil.UsageError{Err: err}
	}
	return o.TLS.Validate()
}

// Run resolves the pod, opens the listeners, negotiates the protocol and
// forwards until ctx ends (SIGINT/SIGTERM), then drains and returns nil.
func (o *portForwardOptions) Run(ctx context.Context) (err error) {
	defer func() { err = errors.Join(err, o.Trace.Close()) }()
	return o.deps.Forward(ctx, &o.Forward)
}
