package mockruntime

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The mock makes no cgroups: a container's usage is the sum, read from
// /proc, over the processes that are its own: its main process's group (its
// session, with a terminal, where a shell puts jobs in groups of their own)
// and its exec processes' groups.

// usage is a container's (or pod's) usage at one time.
type usage struct {
	at             time.Time
	cpuNanos       uint64
	rssBytes       uint64
	minflt, majflt uint64
	writeBytes     uint64
	procs          uint64
}

// cpuSample is the last CPU reading of a container, for a usage rate.
type cpuSample struct {
	at       time.Time
	cpuNanos uint64
}

// memberGroups are the process groups (and, with a terminal, the session)
// of a running container.
func (c *container) memberGroups() (groups map[int]bool, session int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING || c.pid == 0 {
		return nil, 0
	}
	groups = map[int]bool{c.pid: true}
	if c.proc != nil && c.proc.pty != nil {
		session = c.pid
	}
	for p := range c.execs {
		groups[p.cmd.Process.Pid] = true
	}
	return groups, session
}

// measure sums procs' figures for c.
func (c *container) measure(procs []procInfo, now time.Time) usage {
	u := usage{at: now}
	groups, session := c.memberGroups()
	for _, p := range procs {
		if !groups[p.pgid] && (session == 0 || p.sid != session) {
			continue
		}
		u.cpuNanos += p.cpuTicks * uint64(time.Second/clockTicks)
		u.rssBytes += p.rssBytes
		u.minflt += p.minflt
		u.majflt += p.majflt
		u.writeBytes += p.writeBytes
		u.procs++
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// Figures of ended processes are gone from /proc: keep the totals from
	// going backwards.
	u.cpuNanos = max(u.cpuNanos, c.maxCPU)
	c.maxCPU = u.cpuNanos
	u.writeBytes = max(u.writeBytes, c.maxWrite)
	c.maxWrite = u.writeBytes
	return u
}

// nanoCores is the CPU rate since the previous sample of c (0 at first).
func (c *container) nanoCores(u usage) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev := c.lastCPU
	c.lastCPU = cpuSample{at: u.at, cpuNanos: u.cpuNanos}
	dt := u.at.Sub(prev.at)
	if prev.at.IsZero() || dt <= 0 || u.cpuNanos < prev.cpuNanos {
		return 0
	}
	return uint64(float64(u.cpuNanos-prev.cpuNanos) / dt.Seconds())
}

// containerStats reports c's usage from procs.
func (r *Runtime) containerStats(c *container, procs []procInfo, now time.Time) *runtimeapi.ContainerStats {
	u := c.measure(procs, now)
	ts := now.UnixNano()
	st := &runtimeapi.ContainerStats{
		Attributes: &runtimeapi.ContainerAttributes{
			Id:          c.id,
			Metadata:    c.config.GetMetadata(),
			Labels:      maps.Clone(c.config.GetLabels()),
			Annotations: maps.Clone(c.config.GetAnnotations()),
		},
		Cpu: &runtimeapi.CpuUsage{
			Timestamp:            ts,
			UsageCoreNanoSeconds: &runtimeapi.UInt64Value{Value: u.cpuNanos},
			UsageNanoCores:       &runtimeapi.UInt64Value{Value: c.nanoCores(u)},
		},
		Memory: &runtimeapi.MemoryUsage{
			Timestamp:       ts,
			WorkingSetBytes: &runtimeapi.UInt64Value{Value: u.rssBytes},
			UsageBytes:      &runtimeapi.UInt64Value{Value: u.rssBytes},
			RssBytes:        &runtimeapi.UInt64Value{Value: u.rssBytes},
			PageFaults:      &runtimeapi.UInt64Value{Value: u.minflt + u.majflt},
			MajorPageFaults: &runtimeapi.UInt64Value{Value: u.majflt},
		},
		// The writable layer of a host process is what it wrote.
		WritableLayer: &runtimeapi.FilesystemUsage{
			Timestamp:  ts,
			FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: r.tmpDir},
			UsedBytes:  &runtimeapi.UInt64Value{Value: u.writeBytes},
			InodesUsed: &runtimeapi.UInt64Value{Value: 0},
		},
	}
	if limit := c.memoryLimit(); limit > 0 && limit > u.rssBytes {
		st.Memory.AvailableBytes = &runtimeapi.UInt64Value{Value: limit - u.rssBytes}
	}
	return st
}

// writableLayerBytes is the writable-layer total over all containers, as
// last measured.
func (r *Runtime) writableLayerBytes() uint64 {
	var total uint64
	for _, c := range r.allContainers() {
		c.mu.Lock()
		total += c.maxWrite
		c.mu.Unlock()
	}
	return total
}

func (r *Runtime) allContainers() []*container {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Collect(maps.Values(r.containers))
}

// ContainerStats reports one container's usage.
func (s *runtimeService) ContainerStats(_ context.Context, req *runtimeapi.ContainerStatsRequest) (*runtimeapi.ContainerStatsResponse, error) {
	c, err := s.r.findContainer(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ContainerStatsResponse{Stats: s.r.containerStats(c, readProcs(), time.Now())}, nil
}

// ListContainerStats reports the usage of the running containers the filter
// selects (containerd reports those with a task, that is, running ones).
func (s *runtimeService) ListContainerStats(_ context.Context, req *runtimeapi.ListContainerStatsRequest) (*runtimeapi.ListContainerStatsResponse, error) {
	f := req.GetFilter()
	procs, now := readProcs(), time.Now()
	resp := &runtimeapi.ListContainerStatsResponse{}
	for _, c := range s.r.sortedContainers() {
		if c.getState() != runtimeapi.ContainerState_CONTAINER_RUNNING ||
			!prefixMatch(f.GetId(), c.id) || !prefixMatch(f.GetPodSandboxId(), c.podID) || !labelsMatch(f.GetLabelSelector(), c.config.GetLabels()) {
			continue
		}
		resp.Stats = append(resp.Stats, s.r.containerStats(c, procs, now))
	}
	return resp, nil
}

func prefixMatch(prefix, id string) bool { return prefix == "" || strings.HasPrefix(id, prefix) }

// sortedContainers lists the containers, newest first.
func (r *Runtime) sortedContainers() []*container {
	out := r.allContainers()
	slices.SortFunc(out, func(a, b *container) int { return cmp.Compare(b.createdAt, a.createdAt) })
	return out
}

// podStats sums the usage of p's containers.
func (r *Runtime) podStats(p *pod, procs []procInfo, now time.Time) *runtimeapi.PodSandboxStats {
	ts := now.UnixNano()
	cpu := &runtimeapi.CpuUsage{Timestamp: ts, UsageCoreNanoSeconds: &runtimeapi.UInt64Value{}, UsageNanoCores: &runtimeapi.UInt64Value{}}
	mem := &runtimeapi.MemoryUsage{Timestamp: ts, WorkingSetBytes: &runtimeapi.UInt64Value{}, UsageBytes: &runtimeapi.UInt64Value{}, RssBytes: &runtimeapi.UInt64Value{},
		PageFaults: &runtimeapi.UInt64Value{}, MajorPageFaults: &runtimeapi.UInt64Value{}}
	var procCount uint64
	var ctrs []*runtimeapi.ContainerStats
	for _, c := range r.containersOf(p.id) {
		groups, _ := c.memberGroups()
		for _, pi := range procs {
			if groups[pi.pgid] {
				procCount++
			}
		}
		cs := r.containerStats(c, procs, now)
		ctrs = append(ctrs, cs)
		cpu.UsageCoreNanoSeconds.Value += cs.Cpu.UsageCoreNanoSeconds.Value
		cpu.UsageNanoCores.Value += cs.Cpu.UsageNanoCores.Value
		mem.WorkingSetBytes.Value += cs.Memory.WorkingSetBytes.Value
		mem.UsageBytes.Value += cs.Memory.UsageBytes.Value
		mem.RssBytes.Value += cs.Memory.RssBytes.Value
		mem.PageFaults.Value += cs.Memory.PageFaults.Value
		mem.MajorPageFaults.Value += cs.Memory.MajorPageFaults.Value
	}
	return &runtimeapi.PodSandboxStats{
		Attributes: &runtimeapi.PodSandboxAttributes{
			Id:          p.id,
			Metadata:    p.config.GetMetadata(),
			Labels:      maps.Clone(p.config.GetLabels()),
			Annotations: maps.Clone(p.config.GetAnnotations()),
		},
		Linux: &runtimeapi.LinuxPodSandboxStats{
			Cpu:        cpu,
			Memory:     mem,
			Process:    &runtimeapi.ProcessUsage{Timestamp: ts, ProcessCount: &runtimeapi.UInt64Value{Value: procCount}},
			Containers: ctrs,
		},
	}
}

// PodSandboxStats reports one pod's usage.
func (s *runtimeService) PodSandboxStats(_ context.Context, req *runtimeapi.PodSandboxStatsRequest) (*runtimeapi.PodSandboxStatsResponse, error) {
	p, err := s.r.findPod(req.GetPodSandboxId())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.PodSandboxStatsResponse{Stats: s.r.podStats(p, readProcs(), time.Now())}, nil
}

// ListPodSandboxStats reports the usage of the pods the filter selects.
func (s *runtimeService) ListPodSandboxStats(_ context.Context, req *runtimeapi.ListPodSandboxStatsRequest) (*runtimeapi.ListPodSandboxStatsResponse, error) {
	f := req.GetFilter()
	s.r.mu.Lock()
	pods := slices.Collect(maps.Values(s.r.pods))
	s.r.mu.Unlock()
	slices.SortFunc(pods, func(a, b *pod) int { return cmp.Compare(b.createdAt, a.createdAt) })
	procs, now := readProcs(), time.Now()
	resp := &runtimeapi.ListPodSandboxStatsResponse{}
	for _, p := range pods {
		if !prefixMatch(f.GetId(), p.id) || !labelsMatch(f.GetLabelSelector(), p.config.GetLabels()) {
			continue
		}
		resp.Stats = append(resp.Stats, s.r.podStats(p, procs, now))
	}
	return resp, nil
}
