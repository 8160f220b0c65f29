package client

import (
	"context"
	"sort"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// StatsFilter selects containers or pods for stats and statsp. ID and PodID
// are full IDs (resolve prefixes and names first).
type StatsFilter struct {
	ID     string
	PodID  string
	Labels map[string]string
}

// ContainerStats lists container stats matching f, sorted by ID as crictl
// sorts them. Filters are applied again here for runtimes that ignore them.
func (c *Client) ContainerStats(ctx context.Context, f StatsFilter) (*runtimeapi.ListContainerStatsResponse, error) {
	req := &runtimeapi.ListContainerStatsRequest{Filter: &runtimeapi.ContainerStatsFilter{
		Id: fullID(f.ID), PodSandboxId: f.PodID, LabelSelector: f.Labels,
	}}
	var resp *runtimeapi.ListContainerStatsResponse
	err := c.Call(ctx, "listing container stats", func(ctx context.Context) (err error) {
		resp, err = c.Runtime.ListContainerStats(ctx, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	resp.Stats = matchingStats(resp.GetStats(), f)
	return resp, nil
}

// PodStats lists pod sandbox stats matching f (PodID is ignored: ID is the
// pod), sorted by pod ID.
func (c *Client) PodStats(ctx context.Context, f StatsFilter) (*runtimeapi.ListPodSandboxStatsResponse, error) {
	req := &runtimeapi.ListPodSandboxStatsRequest{Filter: &runtimeapi.PodSandboxStatsFilter{
		Id: fullID(f.ID), LabelSelector: f.Labels,
	}}
	var resp *runtimeapi.ListPodSandboxStatsResponse
	err := c.Call(ctx, "listing pod stats", func(ctx context.Context) (err error) {
		resp, err = c.Runtime.ListPodSandboxStats(ctx, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	resp.Stats = matchingStats(resp.GetStats(), f)
	return resp, nil
}

// fullID is id when it is a whole 64-digit ID, for the runtime to filter
// by; a prefix (stats --id 4e18) is matched here instead, as crictl's
// --id matches one.
func fullID(id string) string {
	if len(id) == 64 {
		return id
	}
	return ""
}

// statsAttributes is what container and pod stats' attributes share.
type statsAttributes interface {
	GetId() string
	GetLabels() map[string]string
}

// matchingStats keeps the stats that match f's ID and labels (runtimes may
// ignore the filter), sorted by ID as crictl sorts them. It reuses stats'
// backing array.
func matchingStats[S interface{ GetAttributes() A }, A statsAttributes](stats []S, f StatsFilter) []S {
	out := stats[:0]
	for _, s := range stats {
		a := s.GetAttributes()
		if strings.HasPrefix(a.GetId(), f.ID) && hasLabels(a.GetLabels(), f.Labels) {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].GetAttributes().GetId() < out[j].GetAttributes().GetId() })
	return out
}

// RuntimeConfig asks the runtime for its configuration (today the cgroup
// driver).
func (c *Client) RuntimeConfig(ctx context.Context) (*runtimeapi.RuntimeConfigResponse, error) {
	var resp *runtimeapi.RuntimeConfigResponse
	err := c.Call(ctx, "runtime config", func(ctx context.Context) (err error) {
		resp, err = c.Runtime.RuntimeConfig(ctx, &runtimeapi.RuntimeConfigRequest{})
		return err
	})
	return resp, err
}
