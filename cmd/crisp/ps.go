package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
)

// psOptions are the flags of `crisp ps`.
type psOptions struct {
	f   *factory
	now func() time.Time

	ID      string
	Name    string
	State   string
	Pod     string
	Image   string
	Labels  []string
	All     bool
	Quiet   bool
	NoTrunc bool
	Last    int
	Latest  bool

	filter client.ContainerFilter
}

func newPsCommand(f *factory) *cobra.Command {
	o := &psOptions{f: f, now: time.Now}
	return psCommand(o)
}

// psCommand binds the command's flags to o; tests parse into their own o.
func psCommand(o *psOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ps [flags]",
		Short: "List containers",
		Long: `List the runtime's containers, newest first, as crictl ps does: running ones
only, unless -a/--all or --state says otherwise.

--name is a regular expression; --pod takes a pod ID, unique ID prefix or
unique name; --image an image name, tag or ID; --label may be repeated and
every label must match. IDs are truncated in the table unless --no-trunc; -q
prints full IDs only; -o json and -o yaml print the runtime's full data.

EXIT STATUS
  0  the containers were listed (also when none matched)
  1  the runtime could not be reached or failed, or --pod matched no pod
  2  bad flags or arguments`,
		Example: `  crisp ps
  crisp ps -a --pod web
  crisp ps --state exited --label app=web
  crisp ps -q --name '^nginx$'
  crisp ps -a --image busybox
  crisp ps -a -o yaml`,
		Args: noArgs,
		RunE: completeValidateRun(o),
	}
	fl := cmd.Flags()
	fl.StringVar(&o.ID, "id", "", "only the container with this ID or ID prefix")
	fl.StringVar(&o.Name, "name", "", "only containers whose name matches this regular expression")
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
func (o *psOptions) Complete() error {
	if o.Latest {
		o.Last = 1
	}
	o.filter = client.ContainerFilter{ID: o.ID, State: o.State, Image: o.Image, All: o.All || o.Last > 0}
	var err error
	if o.filter.Name, err = compileFilter("--name", o.Name); err != nil {
		return err
	}
	if o.filter.Labels, err = client.ParseLabels(o.Labels); err != nil {
		return usageError{fmt.Errorf("--label: %w", err)}
	}
	return nil
}

// Validate rejects bad input before the runtime is dialed.
func (o *psOptions) Validate() error {
	if o.State != "" {
		if _, err := client.ParseContainerState(o.State); err != nil {
			return usageError{fmt.Errorf("--state: %w", err)}
		}
	}
	if o.Last < 0 {
		return usageErrorf("--last must be 0 (all) or more, not %d", o.Last)
	}
	return validateQuiet(o.Quiet, o.f.Global.Output)
}

// Run lists the containers and prints them.
func (o *psOptions) Run(ctx context.Context) error {
	c, err := o.f.Client()
	if err != nil {
		return err
	}
	defer c.Close()
	if o.Pod != "" {
		pod, err := c.ResolvePod(ctx, o.Pod)
		if err != nil {
			return fmt.Errorf("--pod: %w", err)
		}
		o.filter.PodID = pod.GetId()
	}
	ctrs, err := c.ListContainers(ctx, o.filter)
	if err != nil {
		return err
	}
	ctrs = lastN(ctrs, o.Last)
	if o.Quiet {
		for _, ctr := range ctrs {
			fmt.Fprintln(o.f.Streams.Out, ctr.GetId())
		}
		return nil
	}
	if o.f.Global.Output != "table" {
		data, err := protoData(&runtimeapi.ListContainersResponse{Containers: ctrs})
		if err != nil {
			return err
		}
		return printData(o.f.Streams.Out, o.f.Global.Output, data, nil)
	}
	// The POD column names each container's pod, as crictl's does.
	podNames := map[string]string{}
	if len(ctrs) > 0 {
		pods, err := c.ListPods(ctx, client.PodFilter{})
		if err != nil {
			return err
		}
		for _, p := range pods {
			podNames[p.GetId()] = p.GetMetadata().GetName()
		}
	}
	now := o.now()
	return printData(o.f.Streams.Out, o.f.Global.Output, nil, func(w io.Writer) error {
		row(w, "CONTAINER", "IMAGE", "CREATED", "STATE", "NAME", "ATTEMPT", "POD ID", "POD")
		for _, ctr := range ctrs {
			row(w, truncID(ctr.GetId(), o.NoTrunc), containerImage(ctr, o.NoTrunc), createdAgo(now, ctr.GetCreatedAt()),
				client.ContainerStateName(ctr.GetState()), ctr.GetMetadata().GetName(), ctr.GetMetadata().GetAttempt(),
				truncID(ctr.GetPodSandboxId(), o.NoTrunc), podNames[ctr.GetPodSandboxId()])
		}
		return nil
	})
}

// containerImage is the image a user would recognise: the name they asked
// for when the runtime kept it, else the image reference, truncated when it
// is a bare digest.
func containerImage(ctr *runtimeapi.Container, noTrunc bool) string {
	img := ctr.GetImage().GetUserSpecifiedImage()
	if img == "" {
		img = ctr.GetImage().GetImage()
	}
	if img == "" {
		img = ctr.GetImageRef()
	}
	if strings.HasPrefix(img, "sha256:") || isHexID(img) {
		return truncID(img, noTrunc)
	}
	return img
}

// isHexID reports whether s looks like a bare 64-character image ID.
func isHexID(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}
