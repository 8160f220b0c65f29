package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/diag"
)

func newSmokeCommand(f *cmdutil.Factory) *cobra.Command {
	o := &diag.Smoke{}
	cmd := &cobra.Command{
		Use:               "smoke [--junit FILE] [--strict] (CONTAINER [--pod POD] [--port N] | --image IMAGE [--pod-config FILE])",
		Short:             "Run a CI battery of streaming checks on every transport the runtime accepts",
		Long:              helpLong("smoke"),
		Example:           helpExample("smoke"),
		ValidArgsFunction: completeContainers(f),
		RunE:              runOptions(f, o),
	}
	o.Target.AddFlags(cmd.Flags())
	o.Target.Trace.CloseAfter(cmd)
	fs := cmd.Flags()
	fs.StringVar(&o.JUnit, "junit", "", "write the results as JUnit XML to FILE")
	fs.BoolVar(&o.Strict, "strict", false, "fail on defects of transports auto does not pick, too")
	fs.StringVar(&o.Image, "image", "", "create a pod and container from IMAGE, test them, and remove them")
	fs.StringVar(&o.PodConfig, "pod-config", "", "with --image: PodSandboxConfig file (JSON or YAML) for the pod")
	fs.BoolVar(&o.KubeletStopped, "kubelet-stopped", false, "with --image: create the scratch pod even though the runtime holds a kubelet's pods (say so only when no kubelet runs: it removes pods it did not create)")
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "bound on the whole run (0: none)")
	diag.AddNodeNameFlag(fs, &o.NodeName)
	return cmd
}
