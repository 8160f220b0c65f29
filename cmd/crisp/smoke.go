package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/yaml"

	"github.com/crisp-cri/crisp/internal/probe"
)

type smokeOptions struct {
	f         *factory
	target    targetOptions
	JUnit     string
	Strict    bool
	Image     string
	PodConfig string
	Timeout   time.Duration
	NodeName  string

	podCfg *runtimeapi.PodSandboxConfig
}

func newSmokeCommand(f *factory) *cobra.Command {
	o := &smokeOptions{f: f}
	cmd := &cobra.Command{
		Use:   "smoke [--junit FILE] [--strict] (CONTAINER [--pod POD] [--port N] | --image IMAGE [--pod-config FILE])",
		Short: "Run a CI battery of streaming checks on every transport the runtime accepts",
		Long: `Run streaming checks on every transport and subprotocol the runtime accepts:
echo round trip, stdout/stderr separation, exit code, stdin EOF, 16 MiB integrity,
TTY and resize, attach output and (with --port, reaching a TCP echo server in
the pod) a port-forward round trip. Each check is printed as it finishes; the
last line is "N passed, N failed" (with ", N skipped" when checks were skipped:
their lines say why).

A failure on the transport --transport auto picks (what users get) fails the
run. A defect on another accepted transport is a warning that quotes the
runtime's behaviour; --strict makes those failures too.

With --image, smoke needs no container: it pulls IMAGE if missing, creates a
pod (from --pod-config, a crictl-style PodSandboxConfig in JSON or YAML, or a
minimal one) and a long-running container that prints, runs the battery, and
removes both on every way out (failure, --timeout, Ctrl-C). The image needs sh,
cat, head, wc and stty (busybox has them); with --port the container also runs
a TCP echo server on that port (busybox's nc) for the port-forward checks.

EXIT STATUS
  0  every check passed (warnings and skipped checks allowed)
  1  a check failed, or the runtime could not be reached
  2  bad flags or arguments
  130 interrupted (what smoke created is removed first)`,
		Example: `  crisp smoke web-1
  crisp smoke web-1 --port 7777 --junit smoke.xml
  crisp smoke --image busybox --junit smoke.xml --strict
  crisp smoke --image busybox --port 7777`,
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
		return usageErrorf("smoke takes one CONTAINER, got %d arguments", len(args))
	}
	if o.PodConfig != "" {
		data, err := os.ReadFile(o.PodConfig)
		if err != nil {
			return usageErrorf("--pod-config: %v", err)
		}
		cfg := &runtimeapi.PodSandboxConfig{}
		if err := yaml.Unmarshal(data, cfg); err != nil {
			return usageErrorf("--pod-config %s: not a PodSandboxConfig in JSON or YAML: %v", o.PodConfig, err)
		}
		if cfg.GetMetadata().GetName() == "" {
			return usageErrorf("--pod-config %s: metadata.name is required", o.PodConfig)
		}
		o.podCfg = cfg
	}
	return nil
}

func (o *smokeOptions) Validate() error {
	switch {
	case o.Image == "" && o.target.Container == "":
		return usageErrorf("smoke needs a CONTAINER or --image IMAGE")
	case o.Image != "" && o.target.Container != "":
		return usageErrorf("smoke takes a CONTAINER or --image IMAGE, not both")
	case o.Image == "" && o.PodConfig != "":
		return usageErrorf("--pod-config goes with --image")
	case o.Image != "" && o.target.Pod != "":
		return usageErrorf("--pod goes with a CONTAINER; --image creates its own pod (use --pod-config to shape it)")
	case o.Timeout < 0:
		return usageErrorf("--timeout must not be negative")
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
	defer env.client.Close()
	out := o.f.Streams.Out
	table := o.f.Global.Output == "table"
	smoker := &probe.Smoker{URLs: env.urls, Streamer: env.streamer, Strict: o.Strict, Waiting: progressf(o.f, "smoke")}
	if table {
		smoker.Progress = func(c probe.SmokeCheck) { printSmokeCheck(out, c) }
	}
	started := time.Now()
	var rep *probe.SmokeReport
	runOn := func(ctx context.Context, t probe.Target) error {
		var err error
		rep, err = smoker.Run(ctx, t)
		return err
	}
	if o.Image != "" {
		logf := func(format string, args ...any) {
			fmt.Fprintf(o.f.Streams.ErrOut, "crisp: smoke: "+format+"\n", args...)
		}
		err = probe.WithScratch(ctx, env.client, o.Image, o.target.Port, o.podCfg, logf, func(ctx context.Context, s probe.Scratch) error {
			return runOn(ctx, probe.Target{ContainerID: s.ContainerID, PodID: s.PodID, Port: o.target.Port})
		})
		if rep != nil {
			rep.Image = o.Image
		}
	} else {
		var t probe.Target
		t, err = o.target.resolve(ctx, env.client)
		if err == nil {
			err = runOn(ctx, t)
		}
	}
	if rep == nil {
		return err
	}
	rep.Origin = probe.NewOrigin(probe.KindSmoke, probe.NodeName(o.NodeName, nil, nil))
	if err != nil {
		// The reports say it too, so that they agree with the exit status.
		err = o.unfinished(ctx, rep, err)
		rep.Error = err.Error()
	}
	if o.JUnit != "" {
		if jerr := writeJUnitFile(o.JUnit, rep, started); jerr != nil {
			err = errors.Join(err, jerr)
		}
	}
	if !table {
		if perr := printData(out, o.f.Global.Output, rep, nil); perr != nil {
			return perr
		}
	} else {
		if rep.Warnings > 0 {
			fmt.Fprintf(out, "%d warning(s): defects on transports --transport auto does not pick (--strict fails them)\n", rep.Warnings)
		}
		fmt.Fprintln(out, smokeTally(rep))
	}
	if err != nil {
		return err
	}
	if !rep.OK() {
		if !table {
			fmt.Fprintln(o.f.Streams.ErrOut, smokeTally(rep))
		}
		return errReported
	}
	return nil
}

// unfinished words why a run stopped before its last check.
func (o *smokeOptions) unfinished(ctx context.Context, rep *probe.SmokeReport, err error) error {
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("smoke interrupted after %d checks: %w", len(rep.Checks), err)
	}
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		return fmt.Errorf("smoke did not finish within --timeout %s: %w", o.Timeout, err)
	}
	return err
}

func smokeTally(rep *probe.SmokeReport) string {
	s := fmt.Sprintf("%d passed, %d failed", rep.Passed, rep.Failed)
	if rep.Skipped > 0 {
		s += fmt.Sprintf(", %d skipped", rep.Skipped)
	}
	return s
}

func printSmokeCheck(w io.Writer, c probe.SmokeCheck) {
	label := map[probe.Outcome]string{probe.Pass: "PASS", probe.Fail: "FAIL", probe.Skip: "SKIP", probe.Warn: "WARN"}[c.Outcome]
	auto := ""
	if c.Auto && c.Protocol != nil {
		auto = " (auto)"
	}
	fmt.Fprintf(w, "%s  %s%s  %s  [%s]\n", label, c.Name(), auto, c.Detail, c.Duration)
}

func writeJUnitFile(path string, rep *probe.SmokeReport, started time.Time) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	if err := rep.WriteJUnit(f, started); err != nil {
		f.Close()
		return fmt.Errorf("--junit %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--junit %s: %w", path, err)
	}
	return nil
}
