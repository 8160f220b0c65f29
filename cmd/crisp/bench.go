package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/feature/diag"
)

// benchOptions are `crisp bench`'s flags: they bind to diag.Bench's
// fields, which Run hands to diag as they are.
type benchOptions struct {
	diag.Bench
	cmdutil.Verb
}

func newBenchCommand(f *cmdutil.Factory) *cobra.Command {
	o := &benchOptions{}
	cmd := &cobra.Command{
		Use:               "bench CONTAINER [--pod POD] [--port N] [-o json] [--size BYTES] [--runs N]",
		Short:             "Measure exec latency and exec and port-forward throughput per transport",
		Long:              helpLong("bench"),
		Example:           helpExample("bench"),
		Args:              cmdutil.ExactArgs(1, "a CONTAINER"),
		ValidArgsFunction: completeContainers(f),
		RunE:              runOptions(f, o),
		Annotations:       map[string]string{cmdutil.OutputFormatsAnnotation: cmdutil.PrintDataFormats},
	}
	addTargetFlags(cmd.Flags(), &o.Target)
	cmd.Flags().Int64Var(&o.Size, "size", 64<<20, "bytes each throughput run moves")
	cmd.Flags().IntVar(&o.Runs, "runs", 5, "runs each throughput median is of")
	return cmd
}

// Complete takes the factory and the CONTAINER.
func (o *benchOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	if err := o.Verb.Complete(f, cmd, args); err != nil {
		return err
	}
	o.Container = args[0]
	return nil
}

// Validate rejects a non-positive --size or --runs and bad target flags.
func (o *benchOptions) Validate() error {
	if err := o.Trace.Validate(); err != nil {
		return err
	}
	if o.Size <= 0 {
		return cmdutil.UsageErrorf("--size must be positive, got %d", o.Size)
	}
	if o.Runs <= 0 {
		return cmdutil.UsageErrorf("--runs must be positive, got %d", o.Runs)
	}
	return validateTarget(&o.Target)
}

// Run measures the target and prints the report.
func (o *benchOptions) Run(ctx context.Context) (err error) {
	defer func() { err = errors.Join(err, o.Trace.Close()) }()
	return o.Bench.Run(ctx, o.F)
}
