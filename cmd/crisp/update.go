package main

import (
	"context"
	"math"
	"runtime"

	"github.com/spf13/cobra"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/lifecycle"
)

// updateOptions are the flags of `crisp update`: the resources to set.
type updateOptions struct {
	cmdutil.Verb
	linux   runtimeapi.LinuxContainerResources
	windows runtimeapi.WindowsContainerResources
}

// Validate rejects values no kernel accepts before the runtime is asked
// (a runtime may take them and fail later, or silently clamp them).
func (o *updateOptions) Validate() error {
	lin, win := &o.linux, &o.windows
	for _, c := range []struct {
		flag      string
		v, lo, hi int64
	}{
		{"--memory", lin.MemoryLimitInBytes, 0, math.MaxInt64},
		{"--cpu-period", lin.CpuPeriod, 0, math.MaxInt64},
		{"--cpu-quota", lin.CpuQuota, -1, math.MaxInt64}, // -1: no limit, as the kernel's CFS takes it
		{"--cpu-share", lin.CpuShares, 0, math.MaxInt64},
		{"--oom-score-adj", lin.OomScoreAdj, -1000, 1000},
		{"--cpu-count", win.CpuCount, 0, math.MaxInt64},
		{"--cpu-maximum", win.CpuMaximum, 0, 10000},
	} {
		if c.v < c.lo || c.v > c.hi {
			if c.hi == math.MaxInt64 {
				return cmdutil.UsageErrorf("%s must be at least %d, not %d", c.flag, c.lo, c.v)
			}
			return cmdutil.UsageErrorf("%s must be between %d and %d, not %d", c.flag, c.lo, c.hi, c.v)
		}
	}
	return nil
}

func (o *updateOptions) Run(ctx context.Context) error {
	res := &runtimeapi.ContainerResources{Linux: &o.linux}
	if runtime.GOOS == "windows" {
		o.windows.CpuShares, o.windows.MemoryLimitInBytes = o.linux.CpuShares, o.linux.MemoryLimitInBytes
		res = &runtimeapi.ContainerResources{Windows: &o.windows}
	}
	return o.WithRuntime(func(c *client.Client) error { return lifecycle.Update(ctx, c, o.Args, res, o.Out()) })
}

func newUpdateCommand(f *cmdutil.Factory) *cobra.Command {
	o := &updateOptions{}
	lin, win := &o.linux, &o.windows
	cmd := &cobra.Command{
		Use:     "update [flags] CONTAINER...",
		Short:   "Update the resources of one or more running containers",
		Long:    helpLong("update"),
		Example: helpExample("update"),
		Args:    cmdutil.ArgsRange(1, -1, "at least one CONTAINER"),
		RunE:    runOptions(f, o),
	}
	fs := cmd.Flags()
	fs.Int64Var(&win.CpuCount, "cpu-count", 0, "(Windows only) number of CPUs available to the container")
	fs.Int64Var(&win.CpuMaximum, "cpu-maximum", 0, "(Windows only) portion of CPU cycles, as a percentage * 100")
	fs.Int64Var(&lin.CpuPeriod, "cpu-period", 0, "CPU CFS period in microseconds (0: the system default)")
	fs.Int64Var(&lin.CpuQuota, "cpu-quota", 0, "CPU CFS quota in microseconds per period")
	fs.Int64Var(&lin.CpuShares, "cpu-share", 0, "CPU shares (weight relative to other containers)")
	fs.Int64Var(&lin.MemoryLimitInBytes, "memory", 0, "memory limit in bytes")
	fs.StringVar(&lin.CpusetCpus, "cpuset-cpus", "", "CPUs to use (0-3, 0,1)")
	fs.StringVar(&lin.CpusetMems, "cpuset-mems", "", "memory nodes to use (0-3, 0,1)")
	fs.Int64Var(&lin.OomScoreAdj, "oom-score-adj", 0, "OOM killer score adjustment")
	return cmd
}
