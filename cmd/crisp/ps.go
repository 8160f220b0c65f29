package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/cri/client"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

// psOptions are the flags of `crisp ps`.
type psOptions struct {
	f   *cmdutil.Factory
	now func() time.Time

	ID, Name, Namespace, State, Pod, Image string
	Labels                                 []string
	All, Quiet, NoTrunc, Latest            bool
	Last                                   int

	filter client.ContainerFilter
}

func newPsCommand(f *cmdutil.Factory) *cobra.Command {
	return psCommand(&psOptions{f: f, now: time.Now})
}

// psCommand binds the command's flags to o; tests parse into their own o.
func psCommand(o *psOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "ps [flags]",
		Short:   "List containers",
		Long:    helpLong("ps"),
		Example: helpExample("ps"),
		Args:    cmdutil.NoArgs,
		RunE:    runOptions(o.f, o),
	}
	fl := cmd.Flags()
	fl.StringVar(&o.ID, "id", "", "only the container with this ID or ID prefix")
	fl.StringVar(&o.Name, "name", "", "only containers whose name matches this regular expression")
	fl.StringVar(&o.Namespace, "namespace", "", "only containers whose pod's namespace matches this regular expression")
	fl.StringVarP(&o.State, "state", "s", "", "only containers in this state: created, running, exited or unknown")
	fl.StringVarP(&o.Pod, "pod", "p", "", "only containers of this pod (ID, ID prefix or name)")
	fl.StringVar(&o.Image, "image", "", "only containers created from this image (name, tag or ID)")
	fl.StringArrayVar(&o.Labels, "label", nil, "only containers with this label, key=value (repeatable)")
	fl.BoolVarP(&o.All, "all", "a", false, "containers in every state, not only running ones")
	fl.BoolVarP(&o.Quiet, "quiet", "q", false, "print container IDs only")
	fl.BoolVar(&o.NoTrunc, "no-trunc", false, "do not truncate IDs")
	fl.IntVarP(&o.Last, "last", "n", 0, "only the N most recently created containers (implies --all)")
	fl.BoolVarP(&o.Latest, "latest", "l", false, "only the most recently created container (implies --all)")
	_ = cmd.RegisterFlagCompletionFunc("pod", completePods(o.f))
	_ = cmd.RegisterFlagCompletionFunc("state", cobra.FixedCompletions(client.ContainerStates, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// Complete builds the filter from the flags.
func (o *psOptions) Complete(*cmdutil.Factory, *cobra.Command, []string) (err error) {
	if o.Latest {
		o.Last = 1
	}
	o.filter = client.ContainerFilter{ID: o.ID, State: o.State, Image: o.Image, All: o.All || o.Last > 0}
	if o.filter.Name, err = cmdutil.CompileFilter("--name", o.Name); err != nil {
		return err
	}
	if o.filter.Namespace, err = cmdutil.CompileFilter("--namespace", o.Namespace); err != nil {
		return err
	}
	o.filter.Labels, err = cmdutil.ParseLabels(o.Labels)
	return err
}

// Validate rejects bad input before the runtime is dialed.
func (o *psOptions) Validate() error {
	if o.State != "" {
		if _, err := client.ParseContainerState(o.State); err != nil {
			return cmdutil.UsageErrorf("--state: %v", err)
		}
	}
	if o.Last < 0 {
		return cmdutil.UsageErrorf("--last must be 0 (all) or more, not %d", o.Last)
	}
	return cmdutil.ValidateQuiet(o.Quiet, o.f.Global.Output)
}

// Run lists the containers and prints them.
func (o *psOptions) Run(ctx context.Context) error {
	return o.f.WithClient(func(c *client.Client) error {
		return query.PS(ctx, c, o.filter, o.Pod, query.ListOptions{Quiet: o.Quiet, Last: o.Last, NoTrunc: o.NoTrunc, Now: o.now()}, o.f.Printer())
	})
}
