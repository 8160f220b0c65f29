package output

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/crisp-cri/crisp/internal/client"
)

// TruncID shortens an ID for a table as messages do (client.ShortID),
// dropping a "sha256:" prefix first.
func TruncID(id string, noTrunc bool) string {
	if noTrunc {
		return id
	}
	return client.ShortID(strings.TrimPrefix(id, "sha256:"))
}

// CreatedAgo says how long ago a CRI timestamp (Unix nanoseconds) was, as
// crictl and docker do ("2 minutes ago").
func CreatedAgo(now time.Time, unixNano int64) string {
	if unixNano == 0 {
		return "Unknown"
	}
	return HumanDuration(now.Sub(time.Unix(0, unixNano))) + " ago"
}

// Timestamp writes a CRI timestamp in UTC with its age.
func Timestamp(now time.Time, unixNano int64) string {
	if unixNano == 0 {
		return "Unknown"
	}
	return fmt.Sprintf("%s (%s)", time.Unix(0, unixNano).UTC().Format(time.RFC3339), CreatedAgo(now, unixNano))
}

// HumanDuration is docker's rough wording of a duration.
func HumanDuration(d time.Duration) string {
	if s := int(d.Seconds()); s < 1 {
		return "Less than a second"
	} else if s == 1 {
		return "1 second"
	} else if s < 60 {
		return fmt.Sprintf("%d seconds", s)
	}
	if m := int(d.Minutes()); m == 1 {
		return "About a minute"
	} else if m < 60 {
		return fmt.Sprintf("%d minutes", m)
	}
	if h := int(math.Round(d.Hours())); h == 1 {
		return "About an hour"
	} else if h < 48 {
		return fmt.Sprintf("%d hours", h)
	} else if h < 24*7*2 {
		return fmt.Sprintf("%d days", h/24)
	} else if h < 24*30*2 {
		return fmt.Sprintf("%d weeks", h/24/7)
	} else if h < 24*365*2 {
		return fmt.Sprintf("%d months", h/24/30)
	}
	return fmt.Sprintf("%d years", int(d.Hours())/24/365)
}

// HumanSize writes a byte count with three significant digits in SI units,
// as crictl does ("1.41MB").
func HumanSize(n uint64) string {
	units := []string{"B", "kB", "MB", "GB", "TB", "PB", "EB"}
	size := float64(n)
	i := 0
	for size >= 1000 && i < len(units)-1 {
		size /= 1000
		i++
	}
	return fmt.Sprintf("%.3g%s", size, units[i])
}

// FormatLabels writes labels as sorted k=v pairs.
func FormatLabels(labels map[string]string) string {
	pairs := make([]string, 0, len(labels))
	for k, v := range labels {
		pairs = append(pairs, k+"="+v)
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ",")
}

// SplitTag splits name:tag, leaving a registry's :port in the name.
func SplitTag(ref string) (repo, tag string) {
	i := strings.LastIndex(ref, ":")
	if i < 0 || strings.Contains(ref[i:], "/") {
		return ref, "<none>"
	}
	return ref[:i], ref[i+1:]
}

// isHexID reports whether s looks like a bare 64-character image ID.
func isHexID(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}
