package debug

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Owner is the crisp process that created a debug container: the node's
// host name, the PID, and the process's start time (so that a PID reused
// by another process is not taken for the owner).
type Owner struct {
	Host  string
	PID   int
	Start uint64
}

// String is the owner as the LabelOwner label holds it: HOST/PID/START.
func (o Owner) String() string { return fmt.Sprintf("%s/%d/%d", o.Host, o.PID, o.Start) }

// ParseOwner reads a LabelOwner value.
func ParseOwner(s string) (Owner, bool) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return Owner{}, false
	}
	pid, err1 := strconv.Atoi(parts[1])
	start, err2 := strconv.ParseUint(parts[2], 10, 64)
	if err1 != nil || err2 != nil {
		return Owner{}, false
	}
	return Owner{Host: parts[0], PID: pid, Start: start}, true
}

// OwnerOf describes process pid of this node.
func OwnerOf(pid int) Owner {
	host, _ := os.Hostname() // an empty host name only makes leftovers look foreign
	start, _ := processStart(pid)
	return Owner{Host: host, PID: pid, Start: start}
}

// OwnerAlive reports whether o still runs. An owner on another host cannot
// be checked and is taken to be alive: its containers are left alone.
func OwnerAlive(o Owner) bool {
	if host, _ := os.Hostname(); host != o.Host {
		return true
	}
	start, ok := processStart(o.PID)
	return ok && start == o.Start
}

// processStart is field 22 of /proc/PID/stat, the process's start time in
// clock ticks since boot.
func processStart(pid int) (uint64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may hold spaces and parentheses: count
	// from the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 20 {
		return 0, false
	}
	start, err := strconv.ParseUint(fields[19], 10, 64)
	return start, err == nil
}
