package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/cri/client"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

// podsOptions are the flags of `crisp pods`.
type podsOptions struct {
	f *cmdutil.Factory
	// now is the clock CREATED is measured against (tests pin it).
	now func() time.Time

	ID, Name, Namespace, State string
	Labels                     []string
	Quiet, NoTrunc, Latest     bool
	Last                       int

	filter client.PodFilter
}

func newPodsCommand(f *cmdutil.Factory) *cobra.Command {
	return podsCommand(&podsOptions{f: f, now: time.Now})
}

// podsCommand binds the command's flags to o; tests parse into their own o.
func podsCommand(o *podsOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "pods [flags]",
		Short:   "List pod sandboxes",
		Long:    helpLong("pods"),
		Example: helpExample("pods"),
		Args:    cmdutil.NoArgs,
		RunE:    runOptions(o.f, o),
	}
	fl := cmd.Flags()
	fl.StringVar(&o.ID, "id", "", "only the pod with this ID or ID prefix")
	fl.StringVar(&o.Name, "name", "", "only pods whose name matches this regular expression")
	fl.StringVar(&o.Namespace, "namespace", "", "only pods whose namespace matches this regular expression")
	fl.StringVarP(&o.State, "state", "s", "", "only pods in this state: ready or notready")
	fl.StringArrayVar(&o.Labels, "label", nil, "only pods with this label, key=value (repeatable)")
	fl.BoolVarP(&o.Quiet, "quiet", "q", false, "print pod IDs only")
	fl.BoolVar(&o.NoTrunc, "no-trunc", false, "do not truncate IDs")
	fl.IntVarP(&o.Last, "last", "n", 0, "only the N most recently created pods")
	fl.BoolVarP(&o.Latest, "latest", "l", false, "only the most recently created pod")
	_ = cmd.RegisterFlagCompletionFunc("state", cobra.FixedCompletions(client.PodStates, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete builds the filter from the flags.
func (o *podsOptions) Complete(*cmdutil.Factory, *cobra.Command, []string) (err error) {
	o.filter = client.PodFilter{ID: o.ID, State: o.State}
	if o.filter.Name, err = cmdutil.CompileFilter("--name", o.Name); err != nil {
		return err
	}
	if o.filter.Namespace, err = cmdutil.CompileFilter("--namespace", o.Namespace); err != nil {
		return err
	}
	if o.Latest {
		o.Last = 1
	}
	o.filter.Labels, err = cmdutil.ParseLabels(o.Labels)
	return err
}

// Validate rejects bad input before the runtime is dialed.
func (o *podsOptions) Validate() error {
	if o.State != "" {
		if _, err := client.ParsePodState(o.State); err != nil {
			return cmdutil.UsageErrorf("--state: %v", err)
		}
	}
	if o.Last < 0 {
		return cmdutil.UsageErrorf("--last must be 0 (all) or more, not %d", o.Last)
	}
	return cmdutil.ValidateQuiet(o.Quiet, o.f.Global.Output)
}

// Run lists the pods and prints them.
func (o *podsOptions) Run(ctx context.Context) error {
	return o.f.WithClient(func(c *client.Client) error {
		return query.Pods(ctx, c, o.filter, query.ListOptions{Quiet: o.Quiet, Last: o.Last, NoTrunc: o.NoTrunc, Now: o.now()}, o.f.Printer())
	})
}
