package output

import (
	"fmt"
	"io"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// CPUPercent is the CPU a container or pod used between two samples, in
// percent of one core: the usage counter's growth over the time between the
// samples. Without an earlier sample (or when the counter's timestamp has
// not moved) the runtime's own usageNanoCores is used.
func CPUPercent(prev, cur *runtimeapi.CpuUsage) float64 {
	dt := cur.GetTimestamp() - prev.GetTimestamp()
	used := cur.GetUsageCoreNanoSeconds().GetValue()
	before := prev.GetUsageCoreNanoSeconds().GetValue()
	if prev == nil || dt <= 0 || used < before {
		return float64(cur.GetUsageNanoCores().GetValue()) / 1e7
	}
	return float64(used-before) / float64(dt) * 100
}

// ContainerStatsTable is crisp stats: crictl's columns. prev holds the
// earlier sample by container ID; names maps IDs to container names. all
// keeps containers that used neither CPU nor memory (crictl leaves those
// out unless -a).
func ContainerStatsTable(w io.Writer, cur []*runtimeapi.ContainerStats, prev map[string]*runtimeapi.ContainerStats, all bool) {
	Row(w, "CONTAINER", "NAME", "CPU %", "MEM", "DISK", "INODES", "SWAP")
	for _, s := range cur {
		a := s.GetAttributes()
		mem := s.GetMemory().GetWorkingSetBytes().GetValue()
		if !all && s.GetCpu().GetUsageCoreNanoSeconds().GetValue() == 0 && mem == 0 {
			continue
		}
		Row(w, TruncID(a.GetId(), false), a.GetMetadata().GetName(),
			fmt.Sprintf("%.2f", CPUPercent(prev[a.GetId()].GetCpu(), s.GetCpu())), HumanSize(mem),
			HumanSize(s.GetWritableLayer().GetUsedBytes().GetValue()), s.GetWritableLayer().GetInodesUsed().GetValue(),
			HumanSize(s.GetSwap().GetSwapUsageBytes().GetValue()))
	}
}

// PodStatsTable is crisp statsp: crictl's columns. A pod the runtime
// reports no CPU or memory for (CRI-O's entries can carry network figures
// only) gets no row, as in crictl, rather than a row of zeros.
func PodStatsTable(w io.Writer, cur []*runtimeapi.PodSandboxStats, prev map[string]*runtimeapi.PodSandboxStats) {
	Row(w, "POD", "POD ID", "CPU %", "MEM")
	for _, s := range cur {
		a := s.GetAttributes()
		if s.GetLinux().GetCpu().GetUsageCoreNanoSeconds().GetValue() == 0 && s.GetLinux().GetMemory().GetWorkingSetBytes().GetValue() == 0 {
			continue
		}
		Row(w, a.GetMetadata().GetName(), TruncID(a.GetId(), false),
			fmt.Sprintf("%.2f", CPUPercent(prev[a.GetId()].GetLinux().GetCpu(), s.GetLinux().GetCpu())),
			HumanSize(s.GetLinux().GetMemory().GetWorkingSetBytes().GetValue()))
	}
}

// FsTable is crisp imagefsinfo -o table: one line per filesystem.
func FsTable(w io.Writer, resp *runtimeapi.ImageFsInfoResponse) {
	Row(w, "KIND", "MOUNTPOINT", "USED", "INODES")
	for _, set := range []struct {
		kind string
		fs   []*runtimeapi.FilesystemUsage
	}{{"image", resp.GetImageFilesystems()}, {"container", resp.GetContainerFilesystems()}} {
		for _, fs := range set.fs {
			Row(w, set.kind, fs.GetFsId().GetMountpoint(), HumanSize(fs.GetUsedBytes().GetValue()), fs.GetInodesUsed().GetValue())
		}
	}
}

// EventRow is one container event in crisp events -o table.
func EventRow(w io.Writer, ev *runtimeapi.ContainerEventResponse) {
	Row(w, time.Unix(0, ev.GetCreatedAt()).UTC().Format(time.RFC3339Nano), ev.GetContainerEventType().String(),
		TruncID(ev.GetContainerId(), false), ev.GetPodSandboxStatus().GetMetadata().GetName())
}
