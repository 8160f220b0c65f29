package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/cri/client"
)

// crictl's inspect, inspectp and inspecti take selectors instead of
// references: with no reference, they inspect every object the selectors
// match (running containers and every pod when none is given), as crictl
// does. The selectors are bound here and turned into IDs before the
// command's own RunE sees its arguments.

// containerSelectors are inspect's: ps' filters.
type containerSelectors struct {
	All, Latest                        bool
	Last                               int
	Name, Namespace, Pod, State, Image string
	Labels                             []string
}

// podSelectors are inspectp's: pods' filters.
type podSelectors struct {
	Latest                 bool
	Last                   int
	Name, Namespace, State string
	Labels                 []string
}

// imageSelectors are inspecti's: images' -f/--filter and --name.
type imageSelectors struct {
	Filters []string
	Name    string
}

func withContainerSelectors(f *cmdutil.Factory, cmd *cobra.Command) *cobra.Command {
	var s containerSelectors
	fl := cmd.Flags()
	fl.BoolVarP(&s.All, "all", "a", false, "with no CONTAINER: containers in every state, not only running ones")
	fl.BoolVarP(&s.Latest, "latest", "l", false, "with no CONTAINER: the most recently created container")
	fl.IntVarP(&s.Last, "last", "n", 0, "with no CONTAINER: the N most recently created containers")
	fl.StringVar(&s.Name, "name", "", "with no CONTAINER: containers whose name matches this regular expression")
	fl.StringVar(&s.Namespace, "namespace", "", "with no CONTAINER: containers whose pod's namespace matches this regular expression")
	fl.StringVarP(&s.Pod, "pod", "p", "", "with no CONTAINER: containers of this pod (ID, ID prefix or name)")
	fl.StringVarP(&s.State, "state", "s", "", "with no CONTAINER: containers in this state")
	fl.StringVar(&s.Image, "image", "", "with no CONTAINER: containers created from this image")
	fl.StringArrayVar(&s.Labels, "label", nil, "with no CONTAINER: containers with this label, key=value (repeatable)")
	return selectRefs(f, cmd, func(ctx context.Context, c *client.Client) ([]string, error) {
		last := s.Last
		if s.Latest {
			last = 1
		}
		filter := client.ContainerFilter{State: s.State, Image: s.Image, All: s.All || last > 0}
		var err error
		if filter.Name, err = cmdutil.CompileFilter("--name", s.Name); err != nil {
			return nil, err
		}
		if filter.Namespace, err = cmdutil.CompileFilter("--namespace", s.Namespace); err != nil {
			return nil, err
		}
		if filter.Labels, err = cmdutil.ParseLabels(s.Labels); err != nil {
			return nil, err
		}
		if s.Pod != "" {
			pod, err := c.ResolvePod(ctx, s.Pod)
			if err != nil {
				return nil, err
			}
			filter.PodID = pod.GetId()
		}
		ctrs, err := c.ListContainers(ctx, filter)
		if err != nil {
			return nil, err
		}
		return idsOf(lastOf(ctrs, last)), nil
	})
}

func withPodSelectors(f *cmdutil.Factory, cmd *cobra.Command) *cobra.Command {
	var s podSelectors
	fl := cmd.Flags()
	fl.BoolVarP(&s.Latest, "latest", "l", false, "with no POD: the most recently created pod")
	fl.IntVarP(&s.Last, "last", "n", 0, "with no POD: the N most recently created pods")
	fl.StringVar(&s.Name, "name", "", "with no POD: pods whose name matches this regular expression")
	fl.StringVar(&s.Namespace, "namespace", "", "with no POD: pods whose namespace matches this regular expression")
	fl.StringVarP(&s.State, "state", "s", "", "with no POD: pods in this state (ready or notready)")
	fl.StringArrayVar(&s.Labels, "label", nil, "with no POD: pods with this label, key=value (repeatable)")
	return selectRefs(f, cmd, func(ctx context.Context, c *client.Client) ([]string, error) {
		last := s.Last
		if s.Latest {
			last = 1
		}
		filter := client.PodFilter{State: s.State}
		var err error
		if filter.Name, err = cmdutil.CompileFilter("--name", s.Name); err != nil {
			return nil, err
		}
		if filter.Namespace, err = cmdutil.CompileFilter("--namespace", s.Namespace); err != nil {
			return nil, err
		}
		if filter.Labels, err = cmdutil.ParseLabels(s.Labels); err != nil {
			return nil, err
		}
		pods, err := c.ListPods(ctx, filter)
		if err != nil {
			return nil, err
		}
		return idsOf(lastOf(pods, last)), nil
	})
}

func withImageSelectors(f *cmdutil.Factory, cmd *cobra.Command) *cobra.Command {
	var s imageSelectors
	fl := cmd.Flags()
	fl.StringArrayVarP(&s.Filters, "filter", "f", nil, "with no IMAGE: images matching crictl's conditions (dangling=, reference=, before=, since=; repeatable)")
	fl.StringVar(&s.Name, "name", "", "with no IMAGE: the images of this name")
	return selectRefs(f, cmd, func(ctx context.Context, c *client.Client) ([]string, error) {
		images, err := c.ListImages(ctx, s.Name)
		if err != nil {
			return nil, err
		}
		if images, err = client.FilterImages(images, s.Filters); err != nil {
			return nil, cmdutil.UsageErrorf("-f/--filter: %v", err)
		}
		return idsOf(images), nil
	})
}

// selectRefs lets cmd run with no reference: then list gives the IDs its
// RunE gets as arguments. No match prints nothing, as crictl.
func selectRefs(f *cmdutil.Factory, cmd *cobra.Command, list func(context.Context, *client.Client) ([]string, error)) *cobra.Command {
	cmd.Args = cobra.ArbitraryArgs
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return run(cmd, args)
		}
		var ids []string
		err := f.WithClient(func(c *client.Client) (err error) {
			ids, err = list(cmd.Context(), c)
			return err
		})
		if err != nil || len(ids) == 0 {
			return err
		}
		return run(cmd, ids)
	}
	return cmd
}

func lastOf[T any](items []T, n int) []T {
	if n > 0 && len(items) > n {
		return items[:n]
	}
	return items
}

func idsOf[T interface{ GetId() string }](items []T) []string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.GetId()
	}
	return ids
}
