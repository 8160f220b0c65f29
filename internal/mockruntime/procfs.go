package mockruntime

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of /proc's CPU times (100 on Linux).
const clockTicks = 100

// procInfo is what the mock reads of one host process in /proc.
type procInfo struct {
	pid, pgid, sid int
	// cpuTicks is the process's CPU time plus that of its reaped children.
	cpuTicks       uint64
	minflt, majflt uint64
	rssBytes       uint64
	// writeBytes is what it wrote (/proc/PID/io wchar; 0 when unreadable).
	writeBytes uint64
}

// readProcs lists every process of the host, from /proc. Processes that end
// while it reads are left out.
func readProcs() []procInfo {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]procInfo, 0, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// readProc reads /proc/PID/stat (and io, when allowed).
func readProc(pid int) (procInfo, bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
	// majflt cmajflt utime stime cutime cstime ... rss (field 24); comm may
	// hold anything, so fields are counted after its closing parenthesis.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 22 {
		return procInfo{}, false
	}
	num := func(k int) uint64 {
		v, _ := strconv.ParseUint(f[k], 10, 64)
		return v
	}
	// f[0] is the state: field 3 of the file.
	p := procInfo{pid: pid, minflt: num(7), majflt: num(9)}
	p.pgid, _ = strconv.Atoi(f[2])
	p.sid, _ = strconv.Atoi(f[3])
	p.cpuTicks = num(11) + num(12) + num(13) + num(14)
	p.rssBytes = num(21) * uint64(os.Getpagesize())
	p.writeBytes = readWchar(pid)
	return p, true
}

// readWchar reads the bytes a process wrote, from /proc/PID/io.
func readWchar(pid int) uint64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		return 0
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "wchar: "); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}
