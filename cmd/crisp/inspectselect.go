package main

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
)

// crictl's inspect, inspectp and inspecti take selectors instead of
// references: with no reference, they inspect every object the selectors
// match (running containers and every pod when none is given), as crictl
// does. The selectors are checked by Validate and listed by Run, on the
// client the inspection uses.

// refSelector is what inspect, inspectp and inspecti run on when given no
// reference.
type refSelector interface {
	// bind adds the selector flags.
	bind(fl *pflag.FlagSet)
	// check rejects bad selector flags before anything is dialled.
	check() error
	// list is the IDs of what the selectors match; check has passed.
	list(ctx context.Context, c *client.Client) ([]string, error)
}

// containerSelectors are inspect's: ps's selectors.
type containerSelectors struct {
	s      cmdutil.ContainerSelectors
	filter client.ContainerFilter
}

func (s *containerSelectors) bind(fl *pflag.FlagSet) { s.s.Bind(fl, "with no CONTAINER:", true) }

func (s *containerSelectors) check() (err error) {
	s.filter, err = s.s.Filter()
	return err
}

func (s *containerSelectors) list(ctx context.Context, c *client.Client) ([]string, error) {
	ctrs, err := c.ListContainers(ctx, s.filter)
	return idsOf(ctrs), err
}

// podSelectors are inspectp's: pods' selectors.
type podSelectors struct {
	s      cmdutil.PodSelectors
	filter client.PodFilter
}

func (s *podSelectors) bind(fl *pflag.FlagSet) { s.s.Bind(fl, "with no POD:") }

func (s *podSelectors) check() (err error) {
	s.filter, err = s.s.Filter()
	return err
}

func (s *podSelectors) list(ctx context.Context, c *client.Client) ([]string, error) {
	pods, err := c.ListPods(ctx, s.filter)
	return idsOf(pods), err
}

// imageSelectors are inspecti's: images' -f/--filter and --name.
type imageSelectors struct {
	Filters []string
	Name    string
}

func (s *imageSelectors) bind(fl *pflag.FlagSet) {
	fl.StringArrayVarP(&s.Filters, "filter", "f", nil, "with no IMAGE: images matching crictl's conditions (dangling=, reference=, before=, since=; repeatable)")
	fl.StringVar(&s.Name, "name", "", "with no IMAGE: the images of this name")
}

func (s *imageSelectors) check() error { return checkImageFilters(s.Filters) }

func (s *imageSelectors) list(ctx context.Context, c *client.Client) ([]string, error) {
	images, err := c.ListImages(ctx, s.Name)
	if err != nil {
		return nil, err
	}
	if images, err = client.FilterImages(images, s.Filters); err != nil {
		return nil, cmdutil.UsageErrorf("-f/--filter: %v", err)
	}
	return idsOf(images), nil
}

// checkImageFilters rejects a malformed -f/--filter of images and inspecti:
// the conditions applied to no image fail as they would on a listing.
func checkImageFilters(filters []string) error {
	if _, err := client.FilterImages(nil, filters); err != nil {
		return cmdutil.UsageErrorf("-f/--filter: %v", err)
	}
	return nil
}

func idsOf[T interface{ GetId() string }](items []T) []string {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.GetId()
	}
	return ids
}
