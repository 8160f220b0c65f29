package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
)

type mockRuntimeOptions struct {
	mockruntime.Options

	f      *factory
	config mockruntime.Config // set by Validate
}

func newMockRuntimeCommand(f *factory) *cobra.Command {
	o := &mockRuntimeOptions{}
	profiles := mockruntime.ProfileNames()
	cmd := &cobra.Command{
		Use:   "mock-runtime --listen unix:///PATH [--profile P] [--stream-addr 127.0.0.1:0] [--fault F]...",
		Short: "Run the loopback mock CRI runtime in the foreground",
		Long: `Run crisp's loopback mock CRI runtime until interrupted (SIGINT, SIGTERM or SIGHUP).

It serves the CRI RuntimeService and ImageService on a unix socket (mode 0600).
Containers are real host processes; pods share the host loopback, so
port-forward reaches 127.0.0.1:PORT. Busybox-like images run sh with busybox
applets first in PATH; nginx and httpd images run a built-in web server on
127.0.0.1:80 (12003 for critest's hostnet-nginx image); any other image needs a
command. The streaming server listens on 127.0.0.1 only and speaks the
protocols of a profile:

  full           SPDY v1-v5, every WebSocket exec protocol incl. v5; SPDY,
                 WebSocket and SPDY-over-WebSocket port-forward (default)
  cri-streaming  what containerd and CRI-O ship: no WebSocket v5, no tunnel
  conmon-rs      WebSocket v5.channel.k8s.io only; port-forward tunnel only
  legacy         SPDY channel.k8s.io and v2 only; SPDY port-forward

--fault (repeatable) injects failures: drop-after=BYTES, delay=DURATION,
refuse-upgrade, kill-stream-server-after=DURATION,
restart-stream-server-after=DURATION, reset-forward-conn=N.

--tls-dir DIR serves the streaming URLs over https: a fresh CA (ca.crt), a
server certificate for 127.0.0.1, ::1, localhost and crisp-mock.localhost, and
a client certificate (client.crt, client.key) are written into DIR. Point
crisp at them with --tls-ca DIR/ca.crt (and, with --tls-client-auth, which
requires the client certificate, --tls-cert DIR/client.crt --tls-key
DIR/client.key).

On the way out every container and exec process is ended and the socket removed.

EXIT STATUS
  0  stopped by a signal after a clean shutdown
  1  the runtime could not start (socket in use, port taken, ...)
  2  bad flags or arguments`,
		Example: `  crisp mock-runtime --listen unix:///tmp/mock.sock
  crisp mock-runtime --listen unix:///tmp/mock.sock --profile cri-streaming --stream-addr 127.0.0.1:10010
  crisp mock-runtime --listen unix:///tmp/mock.sock --fault drop-after=4096 --fault delay=200ms
  crisp mock-runtime --listen unix:///tmp/mock.sock --tls-dir /tmp/mock-tls --tls-client-auth
  crictl -r unix:///tmp/mock.sock runp pod.json`,
		Args: noArgs,
		RunE: runOptions(f, o),
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Listen, "listen", "", "CRI endpoint to serve, unix:///PATH (required)")
	fl.StringVar(&o.Profile, "profile", string(streamserver.ProfileFull), "streaming protocol profile: "+strings.Join(profiles, ", "))
	fl.StringVar(&o.StreamAddr, "stream-addr", "127.0.0.1:0", "streaming server address (loopback only; port 0 picks a free one)")
	fl.StringArrayVar(&o.Faults, "fault", nil, "inject a streaming fault (repeatable): drop-after=BYTES, delay=DURATION, refuse-upgrade, kill-stream-server-after=DURATION, restart-stream-server-after=DURATION, reset-forward-conn=N")
	fl.StringVar(&o.TLSDir, "tls-dir", "", "serve streaming over https with a CA, server and client certificate generated into DIR")
	fl.BoolVar(&o.TLSClientAuth, "tls-client-auth", false, "with --tls-dir: require the client certificate (mTLS)")
	_ = cmd.RegisterFlagCompletionFunc("profile", cobra.FixedCompletions(profiles, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete takes the factory's streams.
func (o *mockRuntimeOptions) Complete(f *factory, _ *cobra.Command, _ []string) error {
	o.f = f
	return nil
}

// Validate parses the flags into the runtime's configuration before
// anything listens.
func (o *mockRuntimeOptions) Validate() (err error) {
	if o.config, err = o.Config(); err != nil {
		return usageError{Err: err}
	}
	return nil
}

// Run serves until ctx is cancelled (Main cancels it on SIGINT, SIGTERM and
// SIGHUP), then shuts the runtime down.
func (o *mockRuntimeOptions) Run(ctx context.Context) error {
	return o.Serve(ctx, o.config, func(format string, args ...any) {
		_, _ = fmt.Fprintf(o.f.Streams.ErrOut, "crisp mock-runtime: "+format+"\n", args...) // the error stream is the last resort: a failed write there has nowhere to go
	})
}
