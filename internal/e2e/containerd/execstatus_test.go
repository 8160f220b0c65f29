package containerd

import (
	"slices"
	"strings"
	"testing"
)

// A command the runtime cannot start exits 127 (not found) or 126 (not
// executable) on every runtime, as docker and kubectl users expect: on
// containerd the runtime answers an error, on CRI-O runc exec's own 255
// with its reason on stderr, which crisp maps the same way. Also through a
// TTY (the reason comes on stdout) and with ExecSync (exec -s).
func TestCrispExecStartFailureStatus(t *testing.T) {
	eachRuntime(t, func(t *testing.T, h *Harness) {
		for _, tc := range []struct {
			name string
			args []string
			want int
		}{
			{"missing", []string{"exec", h.Ctr, "--", "nosuchcmd"}, 127},
			{"missing path", []string{"exec", h.Ctr, "--", "/nosuch/cmd"}, 127},
			{"not executable", []string{"exec", h.Ctr, "--", "/etc/passwd"}, 126},
			{"missing tty", []string{"exec", "-t", h.Ctr, "--", "nosuchcmd"}, 127},
			{"missing sync", []string{"exec", "-s", h.Ctr, "--", "nosuchcmd"}, 127},
			{"not executable sync", []string{"exec", "-s", h.Ctr, "--", "/etc/passwd"}, 126},
			// The command's own statuses pass through untouched, 255 too.
			{"own 255", []string{"exec", h.Ctr, "--", "sh", "-c", "echo 'exec failed: not really' >&2; exit 255"}, 255},
			{"own 127", []string{"exec", h.Ctr, "--", "sh", "-c", "exit 127"}, 127},
		} {
			r := h.crisp(t, tc.args...)
			t.Logf("%s: %v", tc.name, r)
			// Through a TTY, CRI-O now and then ends the stream before runc's
			// "exec failed" line on the terminal is relayed (serves.ttyRaces):
			// crisp then sees a bare 255 and has nothing to read. Twice more.
			for try := 0; tc.want != 255 && r.ExitCode == 255 && r.Stdout == "" && r.Stderr == "" &&
				h.spec.serves.ttyRaces && slices.Contains(tc.args, "-t") && try < 2; try++ {
				t.Logf("%s: %s lost runc's reason on the TTY (its known race); once more", tc.name, h.Name)
				r = h.crisp(t, tc.args...)
				t.Logf("%s: %v", tc.name, r)
			}
			if r.ExitCode != tc.want {
				t.Errorf("%s: crisp %s: exit %d, want %d: %v", tc.name, strings.Join(tc.args, " "), r.ExitCode, tc.want, r)
			}
		}
	})
}
