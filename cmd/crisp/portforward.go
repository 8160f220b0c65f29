package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/session"
	"github.com/crisp-cri/crisp/internal/stream/transport"

	"github.com/crisp-cri/crisp/internal/stream/portforward"
)

// portForwardOptions are port-forward's flags and arguments.
type portForwardOptions struct {
	Addresses []string
	Transport string
	TLS       cmdutil.TLSFlags
	Trace     cmdutil.TraceFlags // traceflags.go

	// Set by Complete.
	PodRef    string
	Mappings  []portforward.PortMapping
	transport transport.Transport

	deps portForwardDeps
}

// portForwardDeps are what port-forward needs from the world
// (session.ForwardDeps); tests replace them.
type portForwardDeps = session.ForwardDeps

func newPortForwardCommand(f *cmdutil.Factory) *cobra.Command {
	o := &portForwardOptions{deps: session.NewForwardDeps(f)}
	return o.command(func(ctx context.Context) error {
		// -v is parsed after the command was built: take the deps now.
		o.deps.Deps = session.NewDeps(f)
		return o.Run(ctx)
	})
}

// command builds the cobra command around o; run is o.Run except in tests.
func (o *portForwardOptions) command(run func(context.Context) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "port-forward [--address A,...] [--transport auto|spdy|websocket] POD [LOCAL:]REMOTE ...",
		Short:   "Forward local ports to a pod; a failed connection never stops the others",
		Long:    helpLong("port-forward"),
		Example: helpExample("port-forward"),
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return cmdutil.UsageErrorf("%s needs a POD and at least one [LOCAL:]REMOTE port, got %d argument(s)", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return run(cmd.Context())
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&o.Addresses, "address", []string{"localhost"}, "local addresses to listen on: IP addresses and localhost (127.0.0.1 and ::1), comma separated")
	fl.StringVar(&o.Transport, "transport", string(transport.Auto), "protocol family: auto, websocket or spdy")
	o.TLS.AddFlags(fl)
	o.Trace.AddFlags(fl)
	o.Trace.CloseAfter(cmd)
	return cmd
}

// Complete parses the pod and the port specifications.
func (o *portForwardOptions) Complete(args []string) error {
	o.PodRef = args[0]
	o.Mappings = nil
	for _, spec := range args[1:] {
		m, err := portforward.ParsePortSpec(spec)
		if err != nil {
			return cmdutil.UsageError{Err: err}
		}
		o.Mappings = append(o.Mappings, m)
	}
	return nil
}

// Validate rejects bad input before any connection is made.
func (o *portForwardOptions) Validate() error {
	t, err := transport.ParseTransport(o.Transport)
	if err != nil {
		return cmdutil.UsageError{Err: err}
	}
	o.transport = t
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
func (o *portForwardOptions) Run(ctx context.Context) error {
	return o.deps.Forward(ctx, session.Forward{PodRef: o.PodRef, Addresses: o.Addresses, Mappings: o.Mappings, Transport: o.transport, TLS: o.TLS, Configure: o.Trace.Apply})
}
