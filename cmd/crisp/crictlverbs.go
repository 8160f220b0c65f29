package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/crictlconfig"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

// crictl's verbs crisp had not: config, metricdescs, metricsp and
// update-runtime-config, with crictl's flags.

// configOptions are `crisp config`'s: one of --get, --set, --list or
// crictl's older KEY [VALUE].
type configOptions struct {
	cmdutil.Verb
	Get      string
	Set      []string
	List     bool
	get, set bool
	path     string
	usage    func() error
}

// Complete finds the config file (--config, $CRI_CONFIG_FILE, crictl's
// default) and which form was given.
func (o *configOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	o.get, o.set, o.usage = cmd.Flags().Changed("get"), cmd.Flags().Changed("set"), cmd.Help
	o.path = f.Global.ConfigFile
	if o.path == "" {
		o.path = f.Env("CRI_CONFIG_FILE")
	}
	if o.path == "" {
		o.path = client.DefaultConfigFile
	}
	return o.Verb.Complete(f, cmd, args)
}

// Validate checks the keys and values of the form given (the first of
// --get, --set, --list and KEY [VALUE], as crictl takes them) on a scratch
// file in memory, which takes what the real one will: nothing is read or
// written before they are right.
func (o *configOptions) Validate() error {
	var scratch crictlconfig.File
	var err error
	switch {
	case o.get:
		_, err = scratch.Get(o.Get)
	case o.set:
		err = scratch.SetPairs(o.Set)
	case o.List:
	case len(o.Args) > 0:
		err = scratch.Set(o.Args[0], o.value())
	}
	if err != nil {
		return cmdutil.UsageError{Err: err}
	}
	return nil
}

// value is VALUE of crictl's older form, KEY [VALUE].
func (o *configOptions) value() string {
	if len(o.Args) == 2 {
		return o.Args[1]
	}
	return ""
}

// Run reads the file (crictl writes a missing one first), then prints or
// writes it; with no form given it prints the help, as crictl.
func (o *configOptions) Run(context.Context) error {
	if !o.get && !o.set && !o.List && len(o.Args) == 0 {
		return o.usage()
	}
	file, err := crictlconfig.Open(o.path)
	if err != nil {
		return err
	}
	switch {
	case o.get:
		v, err := file.Get(o.Get)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(o.Out(), v)
		return err
	case o.set:
		err = file.SetPairs(o.Set)
	case o.List:
		return file.List(o.Out())
	default: // crictl's older form: config KEY [VALUE] sets KEY.
		err = file.Set(o.Args[0], o.value())
	}
	if err != nil {
		return err
	}
	return file.Write()
}

func newConfigCommand(f *cmdutil.Factory) *cobra.Command {
	o := &configOptions{}
	cmd := &cobra.Command{
		Use:     "config [--get KEY | --set KEY=VALUE[,KEY=VALUE] | --list | KEY VALUE]",
		Short:   "Get, set and list the options of the config file (crictl.yaml)",
		Long:    helpLong("config"),
		Example: helpExample("config"),
		Args:    cmdutil.ArgsRange(0, 2, "KEY [VALUE]"),
		RunE:    runOptions(f, o),
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Get, "get", "", "print the option KEY's value")
	fl.StringArrayVar(&o.Set, "set", nil, "set KEY=VALUE (repeatable; several separated by commas)")
	fl.BoolVar(&o.List, "list", false, "print every option and its value")
	return cmd
}

// metricDescsOptions are `crisp metricdescs`'s: no flags of its own.
type metricDescsOptions struct{ jsonVerb }

// Run prints the runtime's metric descriptors.
func (o *metricDescsOptions) Run(ctx context.Context) error {
	return o.WithRuntime(func(c *client.Client) error { return query.MetricDescs(ctx, c, o.p) })
}

func newMetricDescsCommand(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "metricdescs",
		Short:   "List the metric descriptors the runtime offers (ListMetricDescriptors)",
		Long:    helpLong("metricdescs"),
		Example: helpExample("metricdescs"),
		Args:    cmdutil.NoArgs,
		RunE:    runOptions(f, &metricDescsOptions{}),
	}
}

// metricsPodOptions are `crisp metricsp`'s.
type metricsPodOptions struct {
	jsonVerb
	Watch bool
}

// Run prints the pods' metrics, every second with --watch until ctx ends.
func (o *metricsPodOptions) Run(ctx context.Context) error {
	return o.WithRuntime(func(c *client.Client) error {
		for {
			if err := query.PodMetrics(ctx, c, o.p); err != nil || !o.Watch {
				return err
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(time.Second):
			}
		}
	})
}

func newMetricsPodCommand(f *cmdutil.Factory) *cobra.Command {
	o := &metricsPodOptions{}
	cmd := &cobra.Command{
		Use:     "metricsp",
		Short:   "List the pods' metrics (ListPodSandboxMetrics)",
		Long:    helpLong("metricsp"),
		Example: helpExample("metricsp"),
		Args:    cmdutil.NoArgs,
		RunE:    runOptions(f, o),
	}
	cmd.Flags().BoolVarP(&o.Watch, "watch", "w", false, "print the metrics every second until interrupted")
	return cmd
}

// updateRuntimeConfigOptions are `crisp update-runtime-config`'s.
type updateRuntimeConfigOptions struct {
	cmdutil.Verb
	PodCIDR   string
	cidrGiven bool
}

// Complete notes whether --pod-cidr was given (an empty one is a value).
func (o *updateRuntimeConfigOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	o.cidrGiven = cmd.Flags().Changed("pod-cidr")
	return o.Verb.Complete(f, cmd, args)
}

// Validate requires --pod-cidr.
func (o *updateRuntimeConfigOptions) Validate() error {
	if !o.cidrGiven {
		return cmdutil.UsageErrorf("update-runtime-config needs -p/--pod-cidr CIDR (an empty CIDR asks the runtime to drop it)")
	}
	return nil
}

// Run sends the CIDR and says so on the error stream, as crictl logs it.
func (o *updateRuntimeConfigOptions) Run(ctx context.Context) error {
	err := o.WithRuntime(func(c *client.Client) error { return query.UpdateRuntimeConfig(ctx, c, o.PodCIDR, true) })
	if err == nil {
		_, _ = fmt.Fprintln(o.ErrOut(), "crisp: runtime config updated") // the error stream is the last resort: a failed write there has nowhere to go
	}
	return err
}

func newUpdateRuntimeConfigCommand(f *cmdutil.Factory) *cobra.Command {
	o := &updateRuntimeConfigOptions{}
	cmd := &cobra.Command{
		Use:     "update-runtime-config --pod-cidr CIDR",
		Short:   "Send the runtime a new pod CIDR (UpdateRuntimeConfig)",
		Long:    helpLong("update-runtime-config"),
		Example: helpExample("update-runtime-config"),
		Args:    cmdutil.NoArgs,
		RunE:    runOptions(f, o),
	}
	cmd.Flags().StringVarP(&o.PodCIDR, "pod-cidr", "p", "", "the pod CIDR the runtime gives pod IPs from")
	return cmd
}
