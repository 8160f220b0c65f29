package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/cri/client"
	"github.com/crisp-cri/crisp/internal/feature/crictlconfig"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

// crictl's verbs crisp had not: config, metricdescs, metricsp and
// update-runtime-config, with crictl's flags.

func newConfigCommand(f *cmdutil.Factory) *cobra.Command {
	var get string
	var set []string
	var list bool
	cmd := &cobra.Command{
		Use:     "config [--get KEY | --set KEY=VALUE[,KEY=VALUE] | --list | KEY VALUE]",
		Short:   "Get, set and list the options of the config file (crictl.yaml)",
		Long:    helpLong("config"),
		Example: helpExample("config"),
		Args:    cmdutil.ArgsRange(0, 2, "KEY [VALUE]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := f.Global.ConfigFile
			if path == "" {
				path = f.Env("CRI_CONFIG_FILE")
			}
			if path == "" {
				path = client.DefaultConfigFile
			}
			file, err := crictlconfig.Open(path)
			if err != nil {
				return err
			}
			switch {
			case cmd.Flags().Changed("get"):
				v, err := file.Get(get)
				if err != nil {
					return cmdutil.UsageError{Err: err}
				}
				_, err = fmt.Fprintln(f.Streams.Out, v)
				return err
			case cmd.Flags().Changed("set"):
				if err := file.SetPairs(set); err != nil {
					return cmdutil.UsageError{Err: err}
				}
				return file.Write()
			case list:
				return file.List(f.Streams.Out)
			case len(args) == 0:
				return cmd.Help()
			}
			// crictl's older form: config KEY VALUE sets KEY.
			value := ""
			if len(args) == 2 {
				value = args[1]
			}
			if err := file.Set(args[0], value); err != nil {
				return cmdutil.UsageError{Err: err}
			}
			return file.Write()
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&get, "get", "", "print the option KEY's value")
	fl.StringArrayVar(&set, "set", nil, "set KEY=VALUE (repeatable; several separated by commas)")
	fl.BoolVar(&list, "list", false, "print every option and its value")
	return cmd
}

func newMetricDescsCommand(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "metricdescs",
		Short:   "List the metric descriptors the runtime offers (ListMetricDescriptors)",
		Long:    helpLong("metricdescs"),
		Example: helpExample("metricdescs"),
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p := f.PrinterOr(cmd, output.JSON)
			return f.WithClient(func(c *client.Client) error { return query.MetricDescs(cmd.Context(), c, p) })
		},
	}
}

func newMetricsPodCommand(f *cmdutil.Factory) *cobra.Command {
	var watch bool
	cmd := &cobra.Command{
		Use:     "metricsp",
		Short:   "List the pods' metrics (ListPodSandboxMetrics)",
		Long:    helpLong("metricsp"),
		Example: helpExample("metricsp"),
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p := f.PrinterOr(cmd, output.JSON)
			return f.WithClient(func(c *client.Client) error {
				for {
					if err := query.PodMetrics(cmd.Context(), c, p); err != nil || !watch {
						return err
					}
					select {
					case <-cmd.Context().Done():
						return nil
					case <-time.After(time.Second):
					}
				}
			})
		},
	}
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "print the metrics every second until interrupted")
	return cmd
}

func newUpdateRuntimeConfigCommand(f *cmdutil.Factory) *cobra.Command {
	var cidr string
	cmd := &cobra.Command{
		Use:     "update-runtime-config --pod-cidr CIDR",
		Short:   "Send the runtime a new pod CIDR (UpdateRuntimeConfig)",
		Long:    helpLong("update-runtime-config"),
		Example: helpExample("update-runtime-config"),
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("pod-cidr") {
				return cmdutil.UsageErrorf("update-runtime-config needs -p/--pod-cidr CIDR (an empty CIDR asks the runtime to drop it)")
			}
			err := f.WithClient(func(c *client.Client) error {
				return query.UpdateRuntimeConfig(cmd.Context(), c, cidr, true)
			})
			if err == nil {
				_, _ = fmt.Fprintln(f.Streams.ErrOut, "crisp: runtime config updated") // the error stream is the last resort: a failed write there has nowhere to go
			}
			return err
		},
	}
	cmd.Flags().StringVarP(&cidr, "pod-cidr", "p", "", "the pod CIDR the runtime gives pod IPs from")
	return cmd
}
