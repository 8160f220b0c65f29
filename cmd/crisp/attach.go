package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/session"
	"github.com/crisp-cri/crisp/internal/stream/transport"
	"github.com/crisp-cri/crisp/internal/stream/tty"
)

// attachOptions are `crisp attach`'s flags and arguments.
type attachOptions struct {
	Stdin      bool
	TTY        bool
	DetachKeys string
	Transport  string
	Protocol   string
	TLS        cmdutil.TLSFlags
	Trace      cmdutil.TraceFlags     // traceflags.go
	Record     session.RecordFlags    // recordflags.go
	Reconnect  session.ReconnectFlags // attachreconnect.go

	// ProtocolCache is --protocol-cache (protocache.go).
	ProtocolCache bool

	Container string

	keys   []byte
	offers []transport.Offer
	deps   streamDeps
	// exitWait bounds how long attach waits for the runtime to record the
	// exit of a container whose stream ended (the stream may end first).
	exitWait time.Duration
}

func newAttachCommand(f *cmdutil.Factory) *cobra.Command {
	return attachCommand(f, &attachOptions{exitWait: attachExitWait})
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
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cmdutil.UsageErrorf("attach needs exactly one CONTAINER, got %d arguments", len(args))
			}
			return nil
		},
		RunE: runOptions(f, o),
	}
	fl := cmd.Flags()
	fl.BoolVarP(&o.Stdin, "stdin", "i", false, "send stdin to the container")
	fl.BoolVarP(&o.TTY, "tty", "t", false, "the container has a TTY: raw local terminal, resize propagated")
	fl.StringVar(&o.DetachKeys, "detach-keys", tty.DefaultDetachKeys, `keys that detach (with -i); "" disables`)
	fl.StringVar(&o.Transport, "transport", string(transport.Auto), "streaming transport: auto, websocket or spdy")
	fl.StringVar(&o.Protocol, "protocol", "", "offer only this subprotocol, e.g. v4.channel.k8s.io (debugging)")
	fl.BoolVar(&o.ProtocolCache, "protocol-cache", true, session.ProtocolCacheUsage)
	o.TLS.AddFlags(fl)
	o.Trace.AddFlags(fl)
	o.Trace.CloseAfter(cmd)
	o.Record.AddFlags(fl)
	o.Record.CloseAfter(cmd)
	o.Reconnect.AddFlags(fl)
	return cmd
}

// Complete takes CONTAINER from the arguments.
func (o *attachOptions) Complete(f *cmdutil.Factory, _ *cobra.Command, args []string) error {
	if o.deps.Stream == nil {
		o.deps = session.NewDeps(f)
	}
	if len(args) > 0 {
		o.Container = args[0]
	}
	return nil
}

// Validate rejects bad input before any connection is made.
func (o *attachOptions) Validate() error {
	if o.Container == "" {
		return cmdutil.UsageErrorf("attach needs a CONTAINER")
	}
	var err error
	if o.keys, err = tty.ParseDetachKeys(o.DetachKeys); err != nil {
		return cmdutil.UsageErrorf("--detach-keys: %v", err)
	}
	if o.offers, err = session.ParseOffers(o.Transport, o.Protocol); err != nil {
		return err
	}
	return o.TLS.Validate()
}

// Run attaches until the process ends or the user detaches.
func (o *attachOptions) Run(ctx context.Context) error {
	return o.deps.Attach(ctx, session.Attach{
		Container: o.Container, Stdin: o.Stdin, TTY: o.TTY, Keys: o.keys, Offers: o.offers, TLS: o.TLS,
		Configure: o.Trace.Apply, Record: &o.Record, Reconnect: o.Reconnect, ExitWait: o.exitWait, ProtocolCache: o.ProtocolCache,
	})
}
