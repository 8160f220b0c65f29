package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/probe"
	"github.com/crisp-cri/crisp/internal/transport"
)

// targetOptions are the flags probe, smoke and bench share: the container,
// its pod, a port for port-forward checks, and the streaming TLS group.
type targetOptions struct {
	Container string
	Pod       string
	Port      int32
	TLS       tlsOptions
	Trace     traceOptions // traceflags.go
}

func (o *targetOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Pod, "pod", "", "pod for the port-forward checks (default: the container's pod)")
	fs.Int32Var(&o.Port, "port", 0, "remote port for port-forward checks (a TCP echo server there gives the most complete checks); 0 skips them")
	o.TLS.AddFlags(fs)
	o.Trace.addFlags(fs)
}

func (o *targetOptions) validate() error {
	if o.Port < 0 || o.Port > 65535 {
		return usageErrorf("--port must be between 1 and 65535, got %d", o.Port)
	}
	return o.TLS.Validate()
}

// diagEnv is what a diagnostics command needs at run time.
type diagEnv struct {
	client   *client.Client
	urls     probe.URLs
	streamer probe.Streamer
}

// connect dials the runtime and builds the streamer with the TLS settings.
func connect(f *factory, tlsOpts tlsOptions, trace *traceOptions) (*diagEnv, error) {
	settings, err := f.Settings()
	if err != nil {
		return nil, err
	}
	tlsCfg, err := tlsOpts.Config(settings.File, f.Streams.ErrOut)
	if err != nil {
		return nil, err
	}
	c, err := client.Dial(settings)
	if err != nil {
		return nil, err
	}
	// Negotiation details are noise next to probe's own report: -vv.
	cfg := transport.NewConfig(transport.ConfigOptions{
		TLS: tlsCfg, UpgradeTimeout: settings.RequestTimeout, Verbose: f.Global.Verbose, LogLevel: 2, Out: f.Streams.ErrOut,
	})
	if err := trace.apply(&cfg); err != nil {
		c.Close()
		return nil, err
	}
	return &diagEnv{client: c, urls: probe.CRIURLs{Client: c}, streamer: probe.TransportStreamer{Config: cfg}}, nil
}

// resolve turns the container and pod references into IDs; the pod
// defaults to the container's.
func (o *targetOptions) resolve(ctx context.Context, c *client.Client) (probe.Target, error) {
	ctr, err := c.ResolveContainer(ctx, o.Container)
	if err != nil {
		return probe.Target{}, err
	}
	t := probe.Target{ContainerID: ctr.Id, PodID: ctr.PodSandboxId, Port: o.Port}
	if o.Pod != "" {
		pod, err := c.ResolvePod(ctx, o.Pod)
		if err != nil {
			return probe.Target{}, err
		}
		t.PodID = pod.Id
	}
	return t, nil
}

// connect dials the runtime and resolves the target, for probe and bench;
// the caller closes env.client.
func (o *targetOptions) connect(ctx context.Context, f *factory) (*diagEnv, probe.Target, error) {
	env, err := connect(f, o.TLS, &o.Trace)
	if err != nil {
		return nil, probe.Target{}, err
	}
	t, err := o.resolve(ctx, env.client)
	if err != nil {
		env.client.Close()
		return nil, probe.Target{}, err
	}
	return env, t, nil
}

type probeOptions struct {
	f      *factory
	target targetOptions
	// Command replaces the exec probe's `true` (split on spaces).
	Command  string
	Timeout  time.Duration
	NodeName string
}

func newProbeCommand(f *factory) *cobra.Command {
	o := &probeOptions{f: f}
	cmd := &cobra.Command{
		Use:   "probe CONTAINER [--pod POD] [--port N] [-o table|json]",
		Short: "Show which streaming protocols the runtime speaks, and how well",
		Long: `Probe the runtime's streaming server: for exec, attach and port-forward, every
transport and subprotocol is offered alone, each with a fresh URL (the runtime's
tokens are single use): SPDY channel.k8s.io and v2..v5.channel.k8s.io, WebSocket
channel.k8s.io, base64.channel.k8s.io, v4.channel.k8s.io,
v4.base64.channel.k8s.io and v5.channel.k8s.io; for port-forward SPDY
portforward.k8s.io, the SPDY/3.1+portforward.k8s.io tunnel and the direct
WebSocket v4.channel.k8s.io and v4.base64.channel.k8s.io.

Each row says whether the upgrade was accepted (or the HTTP status and reason of
the refusal), the negotiated protocol, the latency of the CRI call and of the
upgrade, and functional checks where the protocol can carry them: exit code
(exec runs ` + "`true`" + `, or --command), output and stdin EOF (` + "`cat`" + `), resize (a TTY
running ` + "`stty size`" + `). Attach probes only read. With --port, port-forward
sends a few bytes to that port and expects an answer (an echo server is best).

The summary says what --transport auto picks for each call and which gaps matter.

EXIT STATUS
  0  the probe ran (refusals and failed checks are in the report)
  1  the runtime, the container or the pod could not be reached, or no
     streaming handshake got an answer (an unverifiable certificate, an
     unreachable streaming server): the matrix is printed, then the reason
  2  bad flags or arguments`,
		Example: `  crisp probe web-1
  crisp probe web-1 --port 8080 -o json
  crisp probe 3f2a --command 'ls /'`,
		Args:              exactArgs(1, "a CONTAINER"),
		ValidArgsFunction: completeContainers(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	o.target.addFlags(cmd.Flags())
	o.target.Trace.closeAfter(cmd) // traceflags.go
	cmd.Flags().StringVar(&o.Command, "command", "", "run `CMD` in the exec probes instead of \"true\" (split on spaces, e.g. --command 'ls /'); the output and stdin checks still use cat")
	cmd.Flags().DurationVar(&o.Timeout, "attempt-timeout", 10*time.Second, "bound on each attempt (RPC, upgrade and check)")
	addNodeNameFlag(cmd.Flags(), &o.NodeName)
	return cmd
}

func (o *probeOptions) Complete(args []string) error {
	o.target.Container = args[0]
	return nil
}

func (o *probeOptions) Validate() error {
	if o.Command != "" && len(strings.Fields(o.Command)) == 0 {
		return usageErrorf("--command is blank")
	}
	if o.Timeout <= 0 {
		return usageErrorf("--attempt-timeout must be positive, got %s", o.Timeout)
	}
	return o.target.validate()
}

func (o *probeOptions) Run(ctx context.Context) error {
	env, t, err := o.target.connect(ctx, o.f)
	if err != nil {
		return err
	}
	defer env.client.Close()
	t.Command = strings.Fields(o.Command)
	p := &probe.Prober{URLs: env.urls, Streamer: env.streamer, Timeout: o.Timeout, Progress: progressf(o.f, "probe")}
	rep, err := p.Run(ctx, t)
	if err != nil {
		return fmt.Errorf("probe of container %s at %s: %w", t.ContainerID, env.client.Endpoint, err)
	}
	rep.Origin = probe.NewOrigin(probe.KindProbe, probe.NodeName(o.NodeName, nil, nil))
	if err := printData(o.f.Streams.Out, o.f.Global.Output, rep, func(w io.Writer) error {
		printProbeTable(w, rep, o.f.Global.Verbose > 0)
		return nil
	}); err != nil {
		return err
	}
	return probeReachedNothing(rep) // tls_test.go
}

// printProbeTable writes the matrix, then the details that matter, then
// the summary.
func printProbeTable(w io.Writer, rep *probe.ProbeReport, verbose bool) {
	row(w, "CALL", "TRANSPORT", "PROTOCOL", "RESULT", "NEGOTIATED", "RPC", "UPGRADE", "CHECKS")
	var notes []string
	for _, r := range rep.Results {
		result := r.Kind()
		if result == "refused" {
			result = fmt.Sprintf("refused %d", r.Status)
		}
		negotiated, upgrade := r.Negotiated, r.Upgrade.String()
		if negotiated == "" {
			negotiated = "-"
		}
		if !r.Accepted && r.Status == 0 {
			upgrade = "-"
		}
		var checks []string
		for _, c := range r.Checks {
			checks = append(checks, c.Name+":"+string(c.Outcome))
			if c.Outcome == probe.Fail || (verbose && c.Outcome != probe.Pass) || (verbose && c.Detail != "") {
				notes = append(notes, fmt.Sprintf("%s %s %s: %s: %s", r.Call, r.Transport, r.Name, c.Name, c.Detail))
			}
		}
		if len(checks) == 0 {
			checks = []string{"-"}
		}
		row(w, r.Call, r.Transport, r.Name, result, negotiated, r.RPC, upgrade, strings.Join(checks, " "))
		if !r.Accepted {
			why := r.Reason
			if why == "" {
				why = r.Error
			}
			notes = append(notes, fmt.Sprintf("%s %s %s: %s: %s", r.Call, r.Transport, r.Name, noteKind(r), firstLineOf(why)))
		}
	}
	fmt.Fprintln(w)
	if len(notes) > 0 {
		fmt.Fprintln(w, "Details:")
		for _, n := range notes {
			fmt.Fprintln(w, "  "+n)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "--transport auto picks:")
	for _, a := range rep.Summary.Auto {
		if a.Protocol == nil {
			fmt.Fprintf(w, "  %s:\tnothing (every step of the auto order was refused)\n", a.Call)
			continue
		}
		fmt.Fprintf(w, "  %s:\t%s %s\t(step: %s)\n", a.Call, a.Protocol.Transport, a.Protocol.Name, a.Step)
	}
	if len(rep.Summary.Gaps) == 0 {
		fmt.Fprintln(w, "Gaps: none")
		return
	}
	fmt.Fprintln(w, "Gaps:")
	for _, g := range rep.Summary.Gaps {
		fmt.Fprintln(w, "  - "+g)
	}
}

// progressf prints what a diagnostics command is waiting for on stderr
// (the report is stdout's), so a slow runtime does not look like a hang.
func progressf(f *factory, name string) func(format string, args ...any) {
	return func(format string, args ...any) {
		_, _ = fmt.Fprintf(f.Streams.ErrOut, "crisp: "+name+": "+format+"\n", args...) // the error stream is the last resort: a failed write there has nowhere to go
	}
}

// noteKind words why a result was not accepted, for the details.
func noteKind(r probe.Result) string {
	switch r.Kind() {
	case "timeout":
		return "timed out"
	case "failed":
		return "failed"
	}
	return "refused"
}

func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
