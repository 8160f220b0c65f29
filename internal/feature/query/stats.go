package query

import (
	"context"
	"io"
	"time"

	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/client"
)

// StatsOptions are crisp stats' and statsp's flags.
type StatsOptions struct {
	Filter client.StatsFilter
	// Pod is resolved into Filter.PodID (stats), Ref into Filter.ID (a
	// container for stats, a pod for statsp): IDs, prefixes or names.
	Pod, Ref string
	// All shows containers that use no CPU and no memory (stats -a).
	All bool
	// Sample is how long the table measures CPU over (-s, seconds).
	Sample time.Duration
	// Watch repeats until ctx ends; each table clears the screen first.
	Watch bool
	// After is how the table waits between samples (tests make it instant).
	After func(time.Duration) <-chan time.Time
}

const clearScreen = "\033[2J\033[H"

// repeat runs once, or with watch until ctx ends; cancellation ends a
// watch cleanly.
func repeat(ctx context.Context, watch bool, once func() error) error {
	for {
		if err := once(); err != nil {
			if watch && ctx.Err() != nil {
				return nil
			}
			return err
		}
		if !watch || ctx.Err() != nil {
			return nil
		}
	}
}

func (o *StatsOptions) wait(ctx context.Context) error {
	after := o.After
	if after == nil {
		after = time.After
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-after(o.Sample):
		return nil
	}
}

// Stats prints container resource usage (crisp stats): the runtime's stats
// as JSON (crictl's shape), or a table measured over o.Sample.
func Stats(ctx context.Context, c *client.Client, o StatsOptions, p output.Printer) error {
	if o.Pod != "" {
		pod, err := c.ResolvePod(ctx, o.Pod)
		if err != nil {
			return err
		}
		o.Filter.PodID = pod.GetId()
	}
	if o.Ref != "" {
		ctr, err := c.ResolveContainer(ctx, o.Ref)
		if err != nil {
			return err
		}
		o.Filter.ID = ctr.GetId()
	}
	return watchStats(ctx, o, p, func(ctx context.Context) (*runtimeapi.ListContainerStatsResponse, error) {
		return c.ContainerStats(ctx, o.Filter)
	}, func(w io.Writer, cur []*runtimeapi.ContainerStats, prev map[string]*runtimeapi.ContainerStats) {
		output.ContainerStatsTable(w, cur, prev, o.All)
	})
}

// PodStats prints pod resource usage (crisp statsp).
func PodStats(ctx context.Context, c *client.Client, o StatsOptions, p output.Printer) error {
	if o.Ref != "" {
		pod, err := c.ResolvePod(ctx, o.Ref)
		if err != nil {
			return err
		}
		o.Filter.ID = pod.GetId()
	}
	return watchStats(ctx, o, p, func(ctx context.Context) (*runtimeapi.ListPodSandboxStatsResponse, error) {
		return c.PodStats(ctx, o.Filter)
	}, output.PodStatsTable)
}

// statsResponse is what ListContainerStats' and ListPodSandboxStats'
// responses share.
type statsResponse[S any] interface {
	proto.Message
	GetStats() []S
}

// watchStats is stats' and statsp's loop, once or with o.Watch until ctx
// ends: the response as JSON (crictl's shape), or a table of two samples
// o.Sample apart (CPU is a rate).
func watchStats[R statsResponse[S], S interface{ GetAttributes() A }, A interface{ GetId() string }](
	ctx context.Context, o StatsOptions, p output.Printer,
	list func(context.Context) (R, error), table func(w io.Writer, cur []S, prev map[string]S),
) error {
	return repeat(ctx, o.Watch, func() error {
		resp, err := list(ctx)
		if err != nil {
			return err
		}
		if p.Format != output.Table {
			if err := p.PrintProto(resp, nil); err != nil {
				return err
			}
			if o.Watch {
				return o.wait(ctx)
			}
			return nil
		}
		prev := map[string]S{}
		for _, s := range resp.GetStats() {
			prev[s.GetAttributes().GetId()] = s
		}
		if err := o.wait(ctx); err != nil {
			return err
		}
		if resp, err = list(ctx); err != nil {
			return err
		}
		return printTable(p, o.Watch, func(w io.Writer) { table(w, resp.GetStats(), prev) })
	})
}

func printTable(p output.Printer, watch bool, table func(io.Writer)) error {
	if watch {
		if _, err := io.WriteString(p.Out, clearScreen); err != nil {
			return err
		}
	}
	return p.Print(nil, func(w io.Writer) error {
		table(w)
		return nil
	})
}
