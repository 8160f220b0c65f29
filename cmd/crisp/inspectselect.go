package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
)

// crictl's inspect, inspectp and inspecti take selectors instead of
// references: with no reference, they inspect every object the selectors
// match (running containers and every pod when none is given), as crictl
// does. The selectors are bound here and turned into IDs before the
// command's own RunE sees its arguments.

// imageSelectors are inspecti's: images' -f/--filter and --name.
type imageSelectors struct {
	Filters []string
	Name    string
}

func withContainerSelectors(f *cmdutil.Factory, cmd *cobra.Command) *cobra.Command {
	var s cmdutil.ContainerSelectors
	s.Bind(cmd.Flags(), "with no CONTAINER:", true)
	return selectRefs(f, cmd, func(ctx context.Context, c *client.Client) ([]string, error) {
		filter, err := s.Filter()
		if err != nil {
			return nil, err
		}
		ctrs, err := c.ListContainers(ctx, filter)
		return idsOf(ctrs), err
	})
}

func withPodSelectors(f *cmdutil.Factory, cmd *cobra.Command) *cobra.Command {
	var s cmdutil.PodSelectors
	s.Bind(cmd.Flags(), "with no POD:")
	return selectRefs(f, cmd, func(ctx context.Context, c *client.Client) ([]string, error) {
		filter, err := s.Filter()
		if err != nil {
			return nil, err
		}
		pods, err := c.ListPods(ctx, filter)
		return idsOf(pods), err
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

func idsOf[T interface{ GetId() string }](items []T) []string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.GetId()
	}
	return ids
}
