package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/transport"

	"github.com/crisp-cri/crisp/internal/transport/portforward"
)

// portForwardOptions are port-forward's flags and arguments.
type portForwardOptions struct {
	Addresses []string
	Transport string
	TLS       tlsOptions

	// Set by Complete.
	PodRef    string
	Mappings  []portforward.PortMapping
	transport transport.Transport

	deps portForwardDeps
}

// portForwardDeps are what port-forward needs from the world; tests replace
// them.
type portForwardDeps struct {
	streamDeps
	// Listen opens the local listeners (portforward.ListenLocal).
	Listen func(addresses []string, mappings []portforward.PortMapping) ([]portforward.LocalListener, error)
	// NewForwarder builds the forwarder (portforward.NewForwarder).
	NewForwarder func(portforward.ForwarderOptions) (*portforward.Forwarder, error)
}

func newPortForwardCommand(f *factory) *cobra.Command {
	o := &portForwardOptions{deps: portForwardDeps{
		streamDeps:   newStreamDeps(f),
		Listen:       portforward.ListenLocal,
		NewForwarder: portforward.NewForwarder,
	}}
	return o.command(func(ctx context.Context) error {
		// -v is parsed after the command was built: take the deps now.
		o.deps.streamDeps = newStreamDeps(f)
		return o.Run(ctx)
	})
}

// command builds the cobra command around o; run is o.Run except in tests.
func (o *portForwardOptions) command(run func(context.Context) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "port-forward [--address A,...] [--transport auto|spdy|websocket] POD [LOCAL:]REMOTE ...",
		Short: "Forward local ports to a pod; a failed connection never stops the others",
		Long: `Forward one or more local ports to ports of a pod (by ID, unique ID prefix or name).

Each port is [LOCAL:]REMOTE: 8080:80 listens on 8080 and forwards to 80; 80 uses
the same port on both sides; :80 or 0:80 picks a free local port and prints it.
--address lists the local addresses to listen on: IP addresses and localhost,
which means 127.0.0.1 and ::1 (either may be missing on a host).

--transport picks the protocol family. auto tries SPDY portforward.k8s.io, then
SPDY/3.1+portforward.k8s.io (SPDY tunnelled in one WebSocket), then the direct
WebSocket protocol v4.channel.k8s.io that CRI streaming servers speak (one
WebSocket per connection). That protocol cannot forward a half-close: once the
local side of a connection has finished, crisp closes the connection as soon
as the remote side has sent nothing for 2s (else every finished connection
would hold its sockets and the remote end open). websocket tries the last
two; spdy only the first. -v says which was chosen.

A connection that fails (nothing listening on the remote port, reset by the
runtime) is reported on stderr and closed; the others, and later ones, carry
on. When the runtime drops the SPDY connection, the next connection
re-establishes it. At the open-files limit crisp says so once (with the limit;
raise it with ulimit -n), waits for connections to close, and carries on. SIGINT or SIGTERM closes the listeners, lets open
connections finish for a moment, and exits 0.

EXIT STATUS
  0  forwarding ended by SIGINT or SIGTERM
  1  the runtime could not be reached, the pod was not found, a local port was
     busy, the runtime accepted none of the protocols tried, or its streaming
     server did not answer the first upgrade within --request-timeout
  2  bad flags or port specifications`,
		Example: `  # Forward local 8080 to the pod's port 80
  crisp port-forward web 8080:80

  # Two ports, one of them on a free local port (printed)
  crisp port-forward web 8080:80 :443

  # Listen on every address, over WebSocket only, showing the protocol
  crisp -v port-forward --address 0.0.0.0 --transport websocket web 8080:80`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageErrorf("%s needs a POD and at least one [LOCAL:]REMOTE port, got %d argument(s)", cmd.CommandPath(), len(args))
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
	return cmd
}

// Complete parses the pod and the port specifications.
func (o *portForwardOptions) Complete(args []string) error {
	o.PodRef = args[0]
	o.Mappings = nil
	for _, spec := range args[1:] {
		m, err := parsePortSpec(spec)
		if err != nil {
			return usageError{err}
		}
		o.Mappings = append(o.Mappings, m)
	}
	return nil
}

// Validate rejects bad input before any connection is made.
func (o *portForwardOptions) Validate() error {
	t, err := transport.ParseTransport(o.Transport)
	if err != nil {
		return usageError{err}
	}
	o.transport = t
	if o.PodRef == "" {
		return usageErrorf("port-forward: empty POD")
	}
	if len(o.Mappings) == 0 {
		return usageErrorf("port-forward: no port to forward; give [LOCAL:]REMOTE")
	}
	if len(o.Addresses) == 0 {
		return usageErrorf("--address: give at least one address (default localhost)")
	}
	for _, a := range o.Addresses {
		if !strings.EqualFold(a, "localhost") && net.ParseIP(a) == nil {
			return usageErrorf("--address %q: want an IP address or localhost", a)
		}
	}
	seen := map[uint16]string{}
	for _, m := range o.Mappings {
		if m.Local == 0 {
			continue
		}
		spec := fmt.Sprintf("%d:%d", m.Local, m.Remote)
		if prev, dup := seen[m.Local]; dup {
			return usageErrorf("port-forward: local port %d is given twice (%s and %s)", m.Local, prev, spec)
		}
		seen[m.Local] = spec
	}
	return o.TLS.Validate()
}

// parsePortSpec parses [LOCAL:]REMOTE: "80" (80 on both sides), "8080:80",
// ":80" and "0:80" (a free local port).
func parsePortSpec(spec string) (portforward.PortMapping, error) {
	bad := func(why string) (portforward.PortMapping, error) {
		return portforward.PortMapping{}, fmt.Errorf("port %q: %s; want [LOCAL:]REMOTE, e.g. 8080:80, 80, or :80 for a free local port", spec, why)
	}
	localStr, remoteStr, hasLocal := strings.Cut(spec, ":")
	if !hasLocal {
		remoteStr, localStr = spec, spec
	}
	if strings.Contains(remoteStr, ":") {
		return bad("more than one colon")
	}
	remote, err := pfParsePort(remoteStr)
	if err != nil {
		return bad("remote " + err.Error())
	}
	if remote == 0 {
		return bad("remote port 0 is not a port")
	}
	var local uint16
	if localStr != "" {
		if local, err = pfParsePort(localStr); err != nil {
			return bad("local " + err.Error())
		}
	}
	return portforward.PortMapping{Local: local, Remote: remote}, nil
}

func pfParsePort(s string) (uint16, error) {
	if s == "" {
		return 0, errors.New("port is empty")
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("port %q is not a number", s)
		}
	}
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("port %q is out of range (0-65535)", s)
	}
	return uint16(n), nil
}

// Run resolves the pod, opens the listeners, negotiates the protocol and
// forwards until ctx ends (SIGINT/SIGTERM), then drains and returns nil.
func (o *portForwardOptions) Run(ctx context.Context) error {
	d := o.deps
	settings, err := d.Settings()
	if err != nil {
		return err
	}
	cli, err := d.Dial(settings)
	if err != nil {
		return err
	}
	defer func() { _ = cli.Close() }() // nothing left to do with a close error
	pod, err := cli.ResolvePod(ctx, o.PodRef)
	if err != nil {
		return fmt.Errorf("port-forward: %w", err)
	}
	cfg, err := d.transportConfig(o.TLS, settings)
	if err != nil {
		return err
	}

	listeners, err := d.Listen(o.Addresses, o.Mappings)
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
		Transport: o.transport,
		Config:    cfg,
		Report: func(format string, args ...any) {
			reportMu.Lock()
			defer reportMu.Unlock()
			_, _ = fmt.Fprintf(d.Streams.ErrOut, "crisp: "+format+"\n", args...) // a report that cannot be written has nowhere else to go
		},
	})
	if err != nil {
		closeListeners()
		return err
	}
	defer func() { _ = fwd.Close() }() // closing the runtime connections on the way out
	if _, err := fwd.Negotiate(ctx); err != nil {
		closeListeners()
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("port-forward to pod %s (%s) at %s: %w", pfPodName(pod), client.ShortID(pod.Id), cli.Endpoint, err)
	}

	return fwd.ServeAll(ctx, listeners, func(ls []portforward.LocalListener) {
		for _, l := range ls {
			_, _ = fmt.Fprintf(d.Streams.Out, "Forwarding from %s -> %d\n", l.Addr(), l.Remote) // stdout gone: forwarding still works
		}
	})
}

func pfPodName(p *runtimeapi.PodSandbox) string {
	if n := p.GetMetadata().GetName(); n != "" {
		return n
	}
	return p.Id
}
