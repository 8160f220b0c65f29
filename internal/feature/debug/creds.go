package debug

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// targetCreds is what the target process holds, as /proc/PID/status shows
// it: what the host way's debug process may hold at most.
type targetCreds struct {
	uid, gid uint32 // effective
	groups   []uint32
	// Capability sets, one bit per capability.
	inh, prm, eff, bnd, amb uint64
	noNewPrivs              bool
	seccomp                 int // 0 none, 1 strict, 2 filter
}

// readCreds reads process pid's credentials.
func readCreds(pid int) (targetCreds, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return targetCreds{}, err
	}
	return parseCreds(string(b))
}

// parseCreds reads the fields of a /proc/PID/status text.
func parseCreds(status string) (targetCreds, error) {
	var c targetCreds
	seen := map[string]bool{}
	for _, line := range strings.Split(status, "\n") {
		key, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(val)
		var err error
		switch key {
		case "Uid", "Gid":
			if len(f) < 2 {
				return c, fmt.Errorf("status: %s: %q", key, val)
			}
			var n uint64
			n, err = strconv.ParseUint(f[1], 10, 32)
			if key == "Uid" {
				c.uid = uint32(n)
			} else {
				c.gid = uint32(n)
			}
		case "Groups":
			for _, g := range f {
				var n uint64
				if n, err = strconv.ParseUint(g, 10, 32); err != nil {
					break
				}
				c.groups = append(c.groups, uint32(n))
			}
		case "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb":
			if len(f) != 1 {
				return c, fmt.Errorf("status: %s: %q", key, val)
			}
			var n uint64
			n, err = strconv.ParseUint(f[0], 16, 64)
			*map[string]*uint64{"CapInh": &c.inh, "CapPrm": &c.prm, "CapEff": &c.eff, "CapBnd": &c.bnd, "CapAmb": &c.amb}[key] = n
		case "NoNewPrivs":
			c.noNewPrivs = len(f) == 1 && f[0] == "1"
		case "Seccomp":
			if len(f) == 1 {
				c.seccomp, err = strconv.Atoi(f[0])
			}
		default:
			continue
		}
		if err != nil {
			return c, fmt.Errorf("status: %s: %w", key, err)
		}
		seen[key] = true
	}
	for _, k := range []string{"Uid", "Gid", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "Seccomp"} {
		if !seen[k] {
			return c, fmt.Errorf("status: no %s line", k)
		}
	}
	return c, nil
}

// capList is the capability numbers set in mask.
func capList(mask uint64) []uintptr {
	var out []uintptr
	for c := range 64 {
		if mask&(1<<c) != 0 {
			out = append(out, uintptr(c))
		}
	}
	return out
}

// lastCap is the highest capability the kernel knows.
func lastCap() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 && n < 64 {
			return n
		}
	}
	return 40 // CAP_CHECKPOINT_RESTORE, Linux 5.9 to 6.x
}
