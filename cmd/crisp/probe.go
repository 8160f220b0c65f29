package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/diag"
)

func newProbeCommand(f *cmdutil.Factory) *cobra.Command {
	o := &diag.Probe{}
	cmd := &cobra.Command{
		Use:               "probe CONTAINER [--pod POD] [--port N] [-o table|json]",
		Short:             "Show which streaming protocols the runtime speaks, and how well",
		Long:              helpLong("probe"),
		Example:           helpExample("probe"),
		Args:              cmdutil.ExactArgs(1, "a CONTAINER"),
		ValidArgsFunction: completeContainers(f),
		RunE:              runOptions(f, o),
	}
	o.Target.AddFlags(cmd.Flags())
	o.Target.Trace.CloseAfter(cmd)
	cmd.Flags().StringVar(&o.Command, "command", "", "run `CMD` in the exec probes instead of \"true\" (split on spaces, e.g. --command 'ls /'); the output and stdin checks still use cat")
	cmd.Flags().DurationVar(&o.Timeout, "attempt-timeout", 10*time.Second, "bound on each attempt (RPC, upgrade and check)")
	diag.AddNodeNameFlag(cmd.Flags(), &o.NodeName)
	return cmd
}
