package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

// statsOptions are the flags of `crisp stats` and `crisp statsp`.
type statsOptions struct {
	cmdutil.Verb
	// pods is true for statsp.
	pods bool

	Labels  []string
	Seconds int
	q       query.StatsOptions
}

func newStatsCommand(f *cmdutil.Factory) *cobra.Command {
	o := &statsOptions{}
	cmd := &cobra.Command{
		Use:     "stats [CONTAINER]",
		Short:   "Show containers' resource usage",
		Long:    helpLong("stats"),
		Example: helpExample("stats"),
		Args:    cmdutil.MaxArgs(1, "one CONTAINER"),
		RunE:    runOptions(f, o),
	}
	fl := o.flags(cmd)
	fl.BoolVarP(&o.q.All, "all", "a", false, "also containers that use no CPU and no memory")
	fl.StringVarP(&o.q.Pod, "pod", "p", "", "only containers of this pod (ID, ID prefix or name)")
	fl.StringVar(&o.q.Filter.ID, "id", "", "only the container with this ID or ID prefix")
	_ = cmd.RegisterFlagCompletionFunc("pod", completePods(f))
	return cmd
}

func newPodStatsCommand(f *cmdutil.Factory) *cobra.Command {
	o := &statsOptions{pods: true}
	cmd := &cobra.Command{
		Use:     "statsp [POD]",
		Short:   "Show pods' resource usage",
		Long:    helpLong("statsp"),
		Example: helpExample("statsp"),
		Args:    cmdutil.MaxArgs(1, "one POD"),
		RunE:    runOptions(f, o),
	}
	o.flags(cmd).StringVar(&o.q.Filter.ID, "id", "", "only the pod with this ID or ID prefix")
	return cmd
}

// flags binds what stats and statsp share.
func (o *statsOptions) flags(cmd *cobra.Command) *pflag.FlagSet {
	fl := cmd.Flags()
	fl.StringArrayVar(&o.Labels, "label", nil, "only those with this label, key=value (repeatable)")
	fl.IntVarP(&o.Seconds, "seconds", "s", 1, "how many seconds the table measures CPU over")
	fl.BoolVarP(&o.q.Watch, "watch", "w", false, "repeat until interrupted")
	return fl
}

// Complete takes the optional argument.
func (o *statsOptions) Complete(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	if err := o.Verb.Complete(f, cmd, args); err != nil {
		return err
	}
	if len(args) == 1 {
		o.q.Ref = args[0]
	}
	return nil
}

// Validate checks -s and the labels before the runtime is dialled.
func (o *statsOptions) Validate() (err error) {
	if o.Seconds < 1 {
		return cmdutil.UsageErrorf("-s/--seconds must be 1 or more, not %d", o.Seconds)
	}
	o.q.Sample = time.Duration(o.Seconds) * time.Second
	o.q.Filter.Labels, err = cmdutil.ParseLabels(o.Labels)
	return err
}

// Run prints the stats.
func (o *statsOptions) Run(ctx context.Context) error {
	return o.F.WithClient(func(c *client.Client) error {
		if o.pods {
			return query.PodStats(ctx, c, o.q, o.F.Printer())
		}
		return query.Stats(ctx, c, o.q, o.F.Printer())
	})
}
