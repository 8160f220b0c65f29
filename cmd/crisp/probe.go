package main

import (
	"context"
	"errors"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/diag"
)

// probeOptions are `crisp probe`'s flags: they bind to diag.Probe's
// fields, which Run hands to diag as they are.
type probeOptions struct {
	diag.Probe
	cmdutil.Verb
}

func newProbeCommand(f *cmdutil.Factory) *cobra.Command {
	o := &probeOptions{}
	cmd := &cobra.Command{
		Use:               "probe CONTAINER [--pod POD] [--port N] [-o table|json]",
		Short:             "Show which streaming protocols the runtime speaks, and how well",
		Long:              helpLong("probe"),
		Example:           helpExample("probe"),
		Args:              cmdutil.ExactArgs(1, "a CONTAINER"),
		ValidArgsFunction: completeContainers(f),
		RunE:              runOptions(f, o),
		Annotations:       map[string]string{cmdutil.OutputFormatsAnnotation: cmdutil.PrintDataFormats},
	}
	addTargetFlags(cmd.Flags(), &o.Target)
	cmd.Flags().StringVar(&o.Command, "command", "", "run `CMD` in the exec probes instead of \"true\" (split on spaces, e.g. --command 'ls /'); the output and stdin checks still use cat")
	cmd.Flags().DurationVar(&o.Timeout, "attempt-timeout", client.DefaultRequestTimeout, "bound on each attempt (RPC, upgrade and check)")
	addNodeNameFlag(cmd.Flags(), &o.NodeName)
	return cmd
}

// Complete takes the factory and the CONTAINER.
func (o *probeOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	if err := o.Verb.Complete(f, cmd, args); err != nil {
		return err
	}
	o.Container = args[0]
	return nil
}

// Validate rejects a blank --command, a non-positive --attempt-timeout and
// bad target flags.
func (o *probeOptions) Validate() error {
	if err := o.Trace.Validate(); err != nil {
		return err
	}
	if o.Command != "" && len(strings.Fields(o.Command)) == 0 {
		return cmdutil.UsageErrorf("--command is blank")
	}
	if o.Timeout <= 0 {
		return cmdutil.UsageErrorf("--attempt-timeout must be positive, got %s", o.Timeout)
	}
	return validateTarget(&o.Target)
}

// Run probes the target and prints the report.
func (o *probeOptions) Run(ctx context.Context) (err error) {
	defer func() { err = errors.Join(err, o.Trace.Close()) }()
	return o.Probe.Run(ctx, o.F)
}

// addTargetFlags binds the flags probe, smoke and bench share: --pod,
// --port and the TLS and trace groups.
func addTargetFlags(fs *pflag.FlagSet, t *diag.Target) {
	fs.StringVar(&t.Pod, "pod", "", "pod for the port-forward checks (default: the container's pod)")
	fs.Int32Var(&t.Port, "port", 0, "remote port for port-forward checks (a TCP echo server there gives the most complete checks); 0 skips them")
	t.TLS.AddFlags(fs)
	t.Trace.AddFlags(fs)
}

// validateTarget rejects a bad --port and bad TLS flags.
func validateTarget(t *diag.Target) error {
	if t.Port < 0 || t.Port > 65535 {
		return cmdutil.UsageErrorf("--port must be between 1 and 65535, got %d", t.Port)
	}
	return t.TLS.Validate()
}

// addNodeNameFlag adds --node-name, the name smoke and probe put in their
// JSON reports so that crisp report can merge the reports of many nodes.
func addNodeNameFlag(fs *pflag.FlagSet, name *string) {
	fs.StringVar(name, "node-name", "", "node name recorded in the JSON report (default: $NODE_NAME, then the hostname)")
}
