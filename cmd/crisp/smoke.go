package main

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/diag"
	"github.com/crisp-cri/crisp/internal/feature/probe"
)

// smokeOptions are `crisp smoke`'s flags: they bind to diag.Smoke's
// fields, which Run hands to diag as they are.
type smokeOptions struct {
	diag.Smoke
	cmdutil.Verb
}

func newSmokeCommand(f *cmdutil.Factory) *cobra.Command {
	o := &smokeOptions{}
	cmd := &cobra.Command{
		Use:               "smoke [--junit FILE] [--strict] (CONTAINER [--pod POD] [--port N] | --image IMAGE [--pod-config FILE])",
		Short:             "Run a CI battery of streaming checks on every transport the runtime accepts",
		Long:              helpLong("smoke"),
		Example:           helpExample("smoke"),
		Args:              cmdutil.MaxArgs(1, "one CONTAINER"),
		ValidArgsFunction: completeContainers(f),
		RunE:              runOptions(f, o),
		Annotations:       map[string]string{cmdutil.OutputFormatsAnnotation: cmdutil.PrintDataFormats},
	}
	addTargetFlags(cmd.Flags(), &o.Target)
	fs := cmd.Flags()
	fs.StringVar(&o.JUnit, "junit", "", "write the results as JUnit XML to FILE")
	fs.BoolVar(&o.Strict, "strict", false, "fail on defects of transports auto does not pick, too")
	fs.StringVar(&o.Image, "image", "", "create a pod and container from IMAGE, test them, and remove them")
	fs.StringVar(&o.PodConfig, "pod-config", "", "with --image: PodSandboxConfig file (JSON or YAML) for the pod")
	fs.BoolVar(&o.KubeletStopped, "kubelet-stopped", false, "with --image: create the scratch pod even though the runtime holds a kubelet's pods (say so only when no kubelet runs: it removes pods it did not create)")
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "bound on the whole run (0: none)")
	addNodeNameFlag(fs, &o.NodeName)
	return cmd
}

// Complete takes the factory and the optional CONTAINER.
func (o *smokeOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	if err := o.Verb.Complete(f, cmd, args); err != nil {
		return err
	}
	if len(args) == 1 {
		o.Container = args[0]
	}
	return nil
}

// Validate rejects flags that do not go together.
func (o *smokeOptions) Validate() error {
	if err := o.Trace.Validate(); err != nil {
		return err
	}
	if err := cmdutil.CheckOutputFile("--junit", o.JUnit); err != nil {
		return err
	}
	switch {
	case o.Image == "" && o.Container == "":
		return cmdutil.UsageErrorf("smoke needs a CONTAINER or --image IMAGE")
	case o.Image != "" && o.Container != "":
		return cmdutil.UsageErrorf("smoke takes a CONTAINER or --image IMAGE, not both")
	case o.Image == "" && o.PodConfig != "":
		return cmdutil.UsageErrorf("--pod-config goes with --image")
	case o.Image == "" && o.KubeletStopped:
		return cmdutil.UsageErrorf("--kubelet-stopped goes with --image")
	case o.Image != "" && o.Pod != "":
		return cmdutil.UsageErrorf("--pod goes with a CONTAINER; --image creates its own pod (use --pod-config to shape it)")
	case o.Timeout < 0:
		return cmdutil.UsageErrorf("--timeout must not be negative")
	}
	return validateTarget(&o.Target)
}

// Run reads --pod-config, runs the checks and prints the report.
func (o *smokeOptions) Run(ctx context.Context) (err error) {
	defer func() { err = errors.Join(err, o.Trace.Close()) }()
	if o.PodConfig != "" {
		// Read before the runtime is dialled; what is wrong with it is the
		// command line's (exit 2).
		if o.PodSandbox, err = probe.LoadPodConfig(ctx, o.PodConfig); err != nil {
			return cmdutil.UsageError{Err: err}
		}
	}
	return o.Smoke.Run(ctx, o.F)
}
