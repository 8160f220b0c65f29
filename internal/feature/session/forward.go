package session

import (
	"context"
	"fmt"
	"sync"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/transport"
	"github.com/crisp-cri/crisp/internal/transport/portforward"
)

// ForwardDeps are what port-forward needs from the world; tests replace
// them.
type ForwardDeps struct {
	Deps
	// Listen opens the local listeners (portforward.ListenLocal).
	Listen func(addresses []string, mappings []portforward.PortMapping) ([]portforward.LocalListener, error)
	// NewForwarder builds the forwarder (portforward.NewForwarder).
	NewForwarder func(portforward.ForwarderOptions) (*portforward.Forwarder, error)
}

// NewForwardDeps are the factory's, with the real listener and forwarder.
func NewForwardDeps(f *cmdutil.Factory) ForwardDeps {
	return ForwardDeps{Deps: NewDeps(f), Listen: portforward.ListenLocal, NewForwarder: portforward.NewForwarder}
}

// Forward is one port-forward: the pod, the local addresses and ports and
// the remote ports, the protocol family and the streaming flags. `crisp
// port-forward` binds its flags and arguments to these fields
// (cmd/crisp/portforward.go) and checks them before Forward.
type Forward struct {
	PodRef    string
	Addresses []string
	Mappings  []portforward.PortMapping
	// Transport is --transport; Family what it gives
	// (transport.ParseTransport), set by the command's Validate.
	Transport string
	Family    transport.Transport
	TLS       cmdutil.TLSFlags
	Trace     cmdutil.TraceFlags
	Peer      cmdutil.PeerFlags
}

// Forward resolves the pod, opens the listeners, negotiates the protocol
// and forwards until ctx ends (SIGINT/SIGTERM), then drains and returns
// nil. Failed connections are reported on the error stream; "Forwarding
// from" lines go to the output stream once every listener is bound. The
// caller closes fw.Trace.
func (d ForwardDeps) Forward(ctx context.Context, fw *Forward) error {
	cli, settings, err := d.dial()
	if err != nil {
		return err
	}
	defer func() { _ = cli.Close() }() // closing a gRPC connection reports nothing to act on
	pod, err := cli.ResolvePod(ctx, fw.PodRef)
	if err != nil {
		return fmt.Errorf("port-forward: %w", err)
	}
	cfg, err := d.config(fw.TLS, settings, nil, cmdutil.Configure(fw.Trace.Apply, fw.Peer.Apply))
	if err != nil {
		return err
	}
	listeners, err := d.Listen(fw.Addresses, fw.Mappings)
	if err != nil {
		return err
	}
	closeListeners := func() {
		for _, l := range listeners {
			_ = l.Close() // never served: nothing to lose
		}
	}
	var reportMu sync.Mutex
	fwd, err := d.NewForwarder(portforward.ForwarderOptions{
		Source:    cli.PortForwardSource("", pod.Id),
		Transport: fw.Family,
		Config:    cfg,
		Report: func(format string, args ...any) {
			reportMu.Lock()
			defer reportMu.Unlock()
			say(d.Streams.ErrOut, "crisp: "+format, args...)
		},
	})
	if err != nil {
		closeListeners()
		return err
	}
	defer func() { _ = fwd.Close() }() // ServeAll has drained; what is left to close has no one to tell
	if _, err := fwd.Negotiate(ctx); err != nil {
		closeListeners()
		if ctx.Err() != nil {
			return nil
		}
		name := pod.GetMetadata().GetName()
		if name == "" {
			name = pod.Id
		}
		return fmt.Errorf("port-forward to pod %s (%s) at %s: %w", name, client.ShortID(pod.Id), cli.Endpoint, err)
	}
	return fwd.ServeAll(ctx, listeners, func(ls []portforward.LocalListener) {
		for _, l := range ls {
			_, _ = fmt.Fprintf(d.Streams.Out, "Forwarding from %s -> %d\n", l.Addr(), l.Remote) // stdout gone: the forwarding goes on regardless
		}
	})
}
