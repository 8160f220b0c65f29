package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/cmdutil"
	"github.com/crisp-cri/crisp/internal/helptext"
	"github.com/crisp-cri/crisp/internal/probe"
)

type smokeOptions struct {
	f         *cmdutil.Factory
	target    targetOptions
	JUnit     string
	Strict    bool
	Image     string
	PodConfig string
	Timeout   time.Duration
	NodeName  string

	podCfg *runtimeapi.PodSandboxConfig
}

func newSmokeCommand(f *cmdutil.Factory) *cobra.Command {
	o := &smokeOptions{f: f}
	cmd := &cobra.Command{
		Use:               "smoke [--junit FILE] [--strict] (CONTAINER [--pod POD] [--port N] | --image IMAGE [--pod-config FILE])",
		Short:             "Run a CI battery of streaming checks on every transport the runtime accepts",
		Long:              helptext.Long("smoke"),
		Example:           helptext.Example("smoke"),
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
	o.target.Trace.CloseAfter(cmd) // traceflags.go
	fs := cmd.Flags()
	fs.StringVar(&o.JUnit, "junit", "", "write the results as JUnit XML to FILE")
	fs.BoolVar(&o.Strict, "strict", false, "fail on defects of transports auto does not pick, too")
	fs.StringVar(&o.Image, "image", "", "create a pod and container from IMAGE, test them, and remove them")
	fs.StringVar(&o.PodConfig, "pod-config", "", "with --image: PodSandboxConfig file (JSON or YAML) for the pod")
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "bound on the whole run (0: none)")
	addNodeNameFlag(fs, &o.NodeName)
	return cmd
}

func (o *smokeOptions) Complete(args []string) error {
	switch {
	case len(args) == 1:
		o.target.Container = args[0]
	case len(args) > 1:
		return cmdutil.UsageErrorf("smoke takes one CONTAINER, got %d arguments", len(args))
	}
	if o.PodConfig != "" {
		var err error
		if o.podCfg, err = probe.LoadPodConfig(o.PodConfig); err != nil {
			return cmdutil.UsageError{Err: err}
		}
	}
	return nil
}

func (o *smokeOptions) Validate() error {
	switch {
	case o.Image == "" && o.target.Container == "":
		return cmdutil.UsageErrorf("smoke needs a CONTAINER or --image IMAGE")
	case o.Image != "" && o.target.Container != "":
		return cmdutil.UsageErrorf("smoke takes a CONTAINER or --image IMAGE, not both")
	case o.Image == "" && o.PodConfig != "":
		return cmdutil.UsageErrorf("--pod-config goes with --image")
	case o.Image != "" && o.target.Pod != "":
		return cmdutil.UsageErrorf("--pod goes with a CONTAINER; --image creates its own pod (use --pod-config to shape it)")
	case o.Timeout < 0:
		return cmdutil.UsageErrorf("--timeout must not be negative")
	}
	return o.target.validate()
}

func (o *smokeOptions) Run(ctx context.Context) error {
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	env, err := connect(o.f, o.target.TLS, &o.target.Trace)
	if err != nil {
		return err
	}
	defer func() { _ = env.Client.Close() }() // closing a gRPC connection reports nothing to act on
	out := o.f.Streams.Out
	table := o.f.Global.Output == "table"
	smoker := &probe.Smoker{URLs: env.URLs, Streamer: env.Streamer, Strict: o.Strict, Waiting: progressf(o.f, "smoke")}
	if table {
		smoker.Progress = func(c probe.SmokeCheck) { _ = c.WriteLine(out) } // a lost progress line leaves the report intact
	}
	started := time.Now()
	rep, err := env.Smoke(ctx, smoker, o.target.Container, o.target.Pod, o.target.Port, o.Image, o.podCfg, func(format string, args ...any) {
		_, _ = fmt.Fprintf(o.f.Streams.ErrOut, "crisp: smoke: "+format+"\n", args...) // the error stream is the last resort: a failed write there has nowhere to go
	})
	if rep == nil {
		return err
	}
	rep.Origin = probe.NewOrigin(probe.KindSmoke, probe.NodeName(o.NodeName, nil, nil))
	if err != nil {
		// The reports say it too, so that they agree with the exit status.
		err = rep.Unfinished(ctx, err, o.Timeout)
		rep.Error = err.Error()
	}
	if o.JUnit != "" {
		if jerr := rep.WriteJUnitFile(o.JUnit, started); jerr != nil {
			err = errors.Join(err, jerr)
		}
	}
	if !table {
		if perr := cmdutil.PrintData(out, o.f.Global.Output, rep, nil); perr != nil {
			return perr
		}
	} else if perr := rep.WriteSummary(out); perr != nil {
		return perr
	}
	if err != nil {
		return err
	}
	if !rep.OK() {
		if !table {
			_, _ = fmt.Fprintln(o.f.Streams.ErrOut, rep.Tally()) // the error stream is the last resort: a failed write there has nowhere to go
		}
		return cmdutil.ErrReported
	}
	return nil
}
