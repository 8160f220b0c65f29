package main

import (
	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/diag"
)

func newBenchCommand(f *cmdutil.Factory) *cobra.Command {
	o := &diag.Bench{}
	cmd := &cobra.Command{
		Use:               "bench CONTAINER [--pod POD] [--port N] [-o json] [--size BYTES] [--runs N]",
		Short:             "Measure exec latency and exec and port-forward throughput per transport",
		Long:              helpLong("bench"),
		Example:           helpExample("bench"),
		Args:              cmdutil.ExactArgs(1, "a CONTAINER"),
		ValidArgsFunction: completeContainers(f),
		RunE:              runOptions(f, o),
	}
	o.Target.AddFlags(cmd.Flags())
	o.Target.Trace.CloseAfter(cmd)
	cmd.Flags().Int64Var(&o.Size, "size", 64<<20, "bytes each throughput run moves")
	cmd.Flags().IntVar(&o.Runs, "runs", 5, "runs each throughput median is of")
	return cmd
}
