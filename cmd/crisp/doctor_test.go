package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
)

// doctor's flag and argument errors are usage errors (exit 2), caught
// before any connection: the endpoint below does not exist.
func TestDoctorUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"doctor", "a", "b"}, "one CONTAINER or POD"},
		{[]string{"doctor", "c", "--port", "70000"}, "--port must be between"},
		{[]string{"doctor", "--port", "80"}, "--port needs a CONTAINER or POD"},
		{[]string{"doctor", "c", "--repeat", "0"}, "--repeat must be 1 or more"},
		{[]string{"doctor", "c", "--interval", "-1s"}, "--interval must not be negative"},
		{[]string{"doctor", "c", "--hop-timeout", "0"}, "--hop-timeout must be positive"},
		{[]string{"doctor", "c", "--command", " "}, "--command is blank"},
		{[]string{"doctor", "c", "--tls-cert", "x"}, "--tls-cert and --tls-key go together"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := append([]string{"-r", "unix:///nonexistent/crisp-test.sock"}, tt.args...)
			code := Main(args, cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, IsTerminalIn: func() bool { return false }})
			if code != cmdutil.ExitUsage {
				t.Errorf("exit %d, want %d\nstderr: %s", code, cmdutil.ExitUsage, errOut.String())
			}
			if !strings.Contains(errOut.String(), tt.want) {
				t.Errorf("stderr %q does not say %q", errOut.String(), tt.want)
			}
		})
	}
}

// A socket that is not there is doctor's finding, not crisp's failure to
// start: the report names the hop and exits 1.
func TestDoctorMissingSocketIsAFailedHop(t *testing.T) {
	var out, errOut bytes.Buffer
	code := Main([]string{"-r", "unix:///nonexistent/crisp-test.sock", "doctor", "c"}, cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, IsTerminalIn: func() bool { return false }})
	if code != cmdutil.ExitFailure {
		t.Fatalf("exit %d, want 1\nstdout: %s\nstderr: %s", code, out.String(), errOut.String())
	}
	for _, want := range []string{"runtime ", "FAIL", "FAIL at hop runtime", "means:", "fix:", "broken at hop runtime"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout does not say %q:\n%s", want, out.String())
		}
	}
}
