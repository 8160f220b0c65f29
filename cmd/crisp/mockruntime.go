package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
)

type mockRuntimeOptions struct {
	mockruntime.Options

	cmdutil.Verb
	config mockruntime.Config // set by Validate
}

func newMockRuntimeCommand(f *cmdutil.Factory) *cobra.Command {
	o := &mockRuntimeOptions{}
	profiles := mockruntime.ProfileNames()
	cmd := &cobra.Command{
		Use:     "mock-runtime --listen unix:///PATH [--profile P] [--stream-addr 127.0.0.1:0] [--fault F]...",
		Short:   "Run the loopback mock CRI runtime in the foreground",
		Long:    helpLong("mock-runtime"),
		Example: helpExample("mock-runtime"),
		Args:    cmdutil.NoArgs,
		RunE:    runOptions(f, o),
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Listen, "listen", "", "CRI endpoint to serve, unix:///PATH (required)")
	fl.StringVar(&o.Profile, "profile", string(streamserver.ProfileFull), "streaming protocol profile: "+strings.Join(profiles, ", "))
	fl.StringVar(&o.StreamAddr, "stream-addr", "127.0.0.1:0", "streaming server address (loopback only; port 0 picks a free one)")
	fl.StringArrayVar(&o.Faults, "fault", nil, "inject a streaming fault (repeatable): drop-after=BYTES, delay=DURATION, refuse-upgrade, kill-stream-server-after=DURATION, restart-stream-server-after=DURATION, reset-forward-conn=N, refuse-conn-one-in=N, withhold-status")
	fl.StringVar(&o.TLSDir, "tls-dir", "", "serve streaming over https with a CA, server and client certificate generated into DIR")
	fl.BoolVar(&o.TLSClientAuth, "tls-client-auth", false, "with --tls-dir: require the client certificate (mTLS)")
	fl.DurationVar(&o.RemoveOrphanPodsAfter, "remove-orphan-pods-after", 0, "act as a kubelet: stop and remove every pod created without the kubelet's io.kubernetes.pod.uid label this long after it was created (0: never)")
	_ = cmd.RegisterFlagCompletionFunc("profile", cobra.FixedCompletions(profiles, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete takes the factory's streams.
func (o *mockRuntimeOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	return o.Verb.Complete(f, cmd, args)
}

// Validate parses the flags into the runtime's configuration before
// anything listens.
func (o *mockRuntimeOptions) Validate() (err error) {
	if o.config, err = o.Config(); err != nil {
		return cmdutil.UsageError{Err: err}
	}
	return nil
}

// Run serves until ctx is cancelled (Main cancels it on SIGINT, SIGTERM and
// SIGHUP), then shuts the runtime down.
func (o *mockRuntimeOptions) Run(ctx context.Context) error {
	return o.Serve(ctx, o.config, func(format string, args ...any) {
		_, _ = fmt.Fprintf(o.F.Streams.ErrOut, "crisp mock-runtime: "+format+"\n", args...) // the error stream is the last resort: a failed write there has nowhere to go
	})
}
