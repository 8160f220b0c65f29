package main

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/certs"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
)

type mockRuntimeOptions struct {
	f *factory

	Listen     string
	Profile    string
	StreamAddr string
	Faults     []string
	// TLSDir, when set, makes the streaming server speak https with a CA,
	// server and client certificate generated into it; TLSClientAuth
	// requires the client certificate (mTLS).
	TLSDir        string
	TLSClientAuth bool

	// Set by Complete.
	config mockruntime.Config
}

func newMockRuntimeCommand(f *factory) *cobra.Command {
	o := &mockRuntimeOptions{}
	profiles := make([]string, len(streamserver.Profiles))
	for i, p := range streamserver.Profiles {
		profiles[i] = string(p)
	}
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

// Complete parses the faults and builds the runtime's configuration.
func (o *mockRuntimeOptions) Complete(f *factory, _ *cobra.Command, _ []string) error {
	o.f = f
	o.config = mockruntime.Config{
		Listen:     o.Listen,
		Profile:    streamserver.Profile(o.Profile),
		StreamAddr: o.StreamAddr,
	}
	for _, s := range o.Faults {
		fault, err := streamserver.ParseFault(s)
		if err != nil {
			return usageErrorf("--fault: %v", err)
		}
		o.config.Faults = append(o.config.Faults, fault)
	}
	return nil
}

// Validate rejects bad flags before anything listens.
func (o *mockRuntimeOptions) Validate() error {
	if o.Listen == "" {
		return usageErrorf("--listen is required, e.g. --listen unix:///tmp/crisp-mock.sock")
	}
	path, ok := strings.CutPrefix(o.Listen, "unix://")
	if !ok || !filepath.IsAbs(path) {
		return usageErrorf("--listen must be unix:///ABSOLUTE/PATH, got %q", o.Listen)
	}
	if o.TLSClientAuth && o.TLSDir == "" {
		return usageErrorf("--tls-client-auth needs --tls-dir DIR (where the CA and the client certificate are written)")
	}
	if !slices.Contains(streamserver.Profiles, o.config.Profile) {
		return usageErrorf("--profile must be one of full, cri-streaming, conmon-rs, legacy; got %q", o.Profile)
	}
	host, _, err := net.SplitHostPort(o.StreamAddr)
	if err != nil {
		return usageErrorf("--stream-addr must be HOST:PORT on loopback, e.g. 127.0.0.1:0; got %q", o.StreamAddr)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return usageErrorf("--stream-addr must be a loopback address (the mock never listens beyond this host); got %q", o.StreamAddr)
	}
	return nil
}

// Run serves until ctx is cancelled (Main cancels it on SIGINT, SIGTERM and
// SIGHUP), then shuts the runtime down.
func (o *mockRuntimeOptions) Run(ctx context.Context) error {
	errOut := o.f.Streams.ErrOut
	var logMu sync.Mutex
	o.config.Logf = func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		_, _ = fmt.Fprintf(errOut, "crisp mock-runtime: "+format+"\n", args...) // the error stream is the last resort: a failed write there has nowhere to go
	}
	if o.TLSDir != "" {
		tlsCfg, err := certs.Generate(o.TLSDir, o.TLSClientAuth)
		if err != nil {
			return fmt.Errorf("mock-runtime --tls-dir %s: generating the TLS material: %w", o.TLSDir, err)
		}
		o.config.StreamTLS = tlsCfg
	}
	rt, err := mockruntime.Start(ctx, o.config)
	if err != nil {
		return err
	}
	o.config.Logf("serving CRI on %s, profile %s, streaming on %s", rt.Endpoint(), o.config.Profile, rt.StreamServer().Addr())
	if o.TLSDir != "" {
		o.config.Logf("streaming over https: CA %s (crisp --tls-ca)", filepath.Join(o.TLSDir, certs.CAFile))
		if o.TLSClientAuth {
			o.config.Logf("client certificate required (mTLS): --tls-cert %s --tls-key %s",
				filepath.Join(o.TLSDir, certs.ClientCertFile), filepath.Join(o.TLSDir, certs.ClientKeyFile))
		} else {
			o.config.Logf("client certificate (optional): %s, key %s",
				filepath.Join(o.TLSDir, certs.ClientCertFile), filepath.Join(o.TLSDir, certs.ClientKeyFile))
		}
	}
	<-ctx.Done()
	if err := rt.Close(); err != nil {
		return err
	}
	return nil
}
