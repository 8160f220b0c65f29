package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/doctor"
)

// doctorOptions are `crisp doctor`'s flags: they bind to doctor.Node's
// fields, which Run hands to doctor as they are.
type doctorOptions struct {
	doctor.Node
	f *cmdutil.Factory
}

func newDoctorCommand(f *cmdutil.Factory) *cobra.Command {
	o := &doctorOptions{}
	cmd := &cobra.Command{
		Use:               "doctor [CONTAINER|POD] [--port N] [--repeat N [--interval D]] [--junit FILE]",
		Short:             "Walk the exec, attach and port-forward path hop by hop and say which hop broke and how to fix it",
		Long:              helpLong("doctor"),
		Example:           helpExample("doctor"),
		ValidArgsFunction: completeContainers(f),
		RunE:              runOptions(f, o),
		Annotations:       map[string]string{cmdutil.OutputFormatsAnnotation: cmdutil.PrintDataFormats},
	}
	fs := cmd.Flags()
	fs.Int32Var(&o.Port, "port", 0, "add a port-forward round trip to this port of the target's pod")
	fs.StringVar(&o.Command, "command", doctor.DefaultCommand, "the round trip's command (split on spaces)")
	fs.IntVar(&o.Repeat.Runs, "repeat", 1, "walk the path N times and group the failures by hop and error (sporadic failures)")
	fs.DurationVar(&o.Repeat.Interval, "interval", 0, "with --repeat: pause between runs")
	fs.DurationVar(&o.HopTimeout, "hop-timeout", client.DefaultRequestTimeout, "bound on each hop")
	fs.StringVar(&o.JUnit, "junit", "", "write the hops as JUnit XML to FILE")
	addNodeNameFlag(fs, &o.NodeName)
	o.TLS.AddFlags(fs)
	return cmd
}

// Complete takes the factory and the optional CONTAINER or POD.
func (o *doctorOptions) Complete(f *cmdutil.Factory, _ *cobra.Command, args []string) error {
	o.f = f
	switch {
	case len(args) == 1:
		o.Target = args[0]
	case len(args) > 1:
		return cmdutil.UsageErrorf("doctor takes one CONTAINER or POD, got %d arguments", len(args))
	}
	return nil
}

// Validate rejects bad numbers and flags that need a target.
func (o *doctorOptions) Validate() error {
	switch {
	case o.Port < 0 || o.Port > 65535:
		return cmdutil.UsageErrorf("--port must be between 1 and 65535, got %d", o.Port)
	case o.Port != 0 && o.Target == "":
		return cmdutil.UsageErrorf("--port needs a CONTAINER or POD (its pod is where the port is forwarded)")
	case o.Repeat.Runs < 1:
		return cmdutil.UsageErrorf("--repeat must be 1 or more, got %d", o.Repeat.Runs)
	case o.Repeat.Interval < 0:
		return cmdutil.UsageErrorf("--interval must not be negative, got %s", o.Repeat.Interval)
	case o.HopTimeout <= 0:
		return cmdutil.UsageErrorf("--hop-timeout must be positive, got %s", o.HopTimeout)
	case strings.TrimSpace(o.Command) == "":
		return cmdutil.UsageErrorf("--command is blank")
	}
	return o.TLS.Validate()
}

// Run walks the path and prints the report.
func (o *doctorOptions) Run(ctx context.Context) error {
	return o.Node.Run(ctx, o.f)
}
