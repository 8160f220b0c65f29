package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/query"
)

// psOptions are the flags of `crisp ps`.
type psOptions struct {
	f   *factory
	now func() time.Time

	ID, Name, Namespace, State, Pod, Image string
	Labels                                 []string
	All, Quiet, NoTrunc, Latest            bool
	Last                                   int

	filter client.ContainerFilter
}

func newPsCommand(f *factory) *cobra.Command {
	return psCommand(&psOptions{f: f, now: time.Now})
}

// psCommand binds the command's flags to o; tests parse into their own o.
func psCommand(o *psOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ps [flags]",
		Short: "List containers",
		Long: `List the runtime's containers, newest first, as crictl ps does: running ones
only, unless -a/--all or --state says otherwise.

--name and --namespace (the pod's) are regular expressions; --pod takes a pod
ID, unique ID prefix or unique name; --image an image name, tag or ID; --label
may be repeated and every label must match. IDs are truncated in the table
unless --no-trunc; -q prints full IDs only; -o json|yaml|go-template print
crictl's JSON.

EXIT STATUS
  0  the containers were listed (also when none matched)
  1  the runtime could not be reached or failed, or --pod matched no pod
  2  bad flags or arguments`,
		Example: `  crisp ps
  crisp ps -a --pod web --namespace '^prod$'
  crisp ps --state exited --label app=web
  crisp ps -q --name '^nginx$'
  crisp ps -o go-template --template '{{range .containers}}{{.id}}{{"\n"}}{{end}}'`,
		Args: noArgs,
		RunE: completeValidateRun(o),
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
func (o *psOptions) Complete() (err error) {
	if o.Latest {
		o.Last = 1
	}
	o.filter = client.ContainerFilter{ID: o.ID, State: o.State, Image: o.Image, All: o.All || o.Last > 0}
	if o.filter.Name, err = compileFilter("--name", o.Name); err != nil {
		return err
	}
	if o.filter.Namespace, err = compileFilter("--namespace", o.Namespace); err != nil {
		return err
	}
	o.filter.Labels, err = parseLabels(o.Labels)
	return err
}

// Validate rejects bad input before the runtime is dialed.
func (o *psOptions) Validate() error {
	if o.State != "" {
		if _, err := client.ParseContainerState(o.State); err != nil {
			return usageErrorf("--state: %v", err)
		}
	}
	if o.Last < 0 {
		return usageErrorf("--last must be 0 (all) or more, not %d", o.Last)
	}
	return validateQuiet(o.Quiet, o.f.Global.Output)
}

// Run lists the containers and prints them.
func (o *psOptions) Run(ctx context.Context) error {
	return o.f.withClient(func(c *client.Client) error {
		return query.PS(ctx, c, o.filter, o.Pod, query.ListOptions{Quiet: o.Quiet, Last: o.Last, NoTrunc: o.NoTrunc, Now: o.now()}, o.f.printer())
	})
}
