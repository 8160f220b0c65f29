package kubelet

import (
	"encoding/json"
	"testing"
)

// The tolerance for CRI-O's TTY race is narrow: a run that failed only on
// that race on the CRI-O node passes; the same failure on the containerd
// node, another failure beside it, a problem, or no runs at all does not.
func TestFailedOnTTYRacesOnly(t *testing.T) {
	c := &Cluster{NodeName: "ctrd", CRIO: &Node{Name: "crio"}}
	race := "on a TTY, the size command exited 0 after the resize to 40x120, but its last line never arrived: " +
		"the runtime sent the exit status and closed the stream before it had copied all of the terminal's output; " +
		"it must finish copying the TTY's output before it reports the exit"
	type check struct{ Check, Outcome, Detail string }
	type run struct {
		Node   string
		Checks []check
	}
	doc := func(problems []string, runs ...run) string {
		b, err := json.Marshal(map[string]any{"runs": runs, "problems": problems})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	passed := run{"ctrd", []check{{"exec/echo", "pass", ""}}}
	raced := run{"crio", []check{{"exec/tty-resize", "fail", race}}}
	for _, tt := range []struct {
		name string
		code int
		out  string
		want bool
	}{
		{"race on CRI-O only", 1, doc(nil, passed, raced), true},
		{"the race on containerd", 1, doc(nil, run{"ctrd", raced.Checks}), false},
		{"another failure beside it", 1, doc(nil, run{"crio", append([]check{{"exec/echo", "fail", "lost"}}, raced.Checks...)}), false},
		{"a problem beside it", 1, doc([]string{"unreadable"}, raced), false},
		{"nothing failed", 1, doc(nil, passed), false},
		{"no runs", 1, doc(nil), false},
		{"exit 2", 2, doc(nil, raced), false},
		{"not JSON", 1, "FAIL", false},
	} {
		if got := c.failedOnTTYRacesOnly(tt.code, tt.out); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
