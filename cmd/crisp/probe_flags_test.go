package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
)

// Flag and argument errors of probe, smoke, bench and doctor are usage errors
// (exit 2), caught before any connection is made: the endpoint below does
// not exist.
func TestDiagnosticsUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"probe"}, "needs a CONTAINER"},
		{[]string{"probe", "c", "--port", "70000"}, "--port"},
		{[]string{"probe", "c", "--command", "  "}, "--command is blank"},
		{[]string{"smoke"}, "needs a CONTAINER or --image"},
		{[]string{"smoke", "c", "--image", "busybox"}, "not both"},
		{[]string{"smoke", "c", "d"}, "one CONTAINER"},
		{[]string{"smoke", "c", "--pod-config", "/nonexistent/pod.yaml"}, "--pod-config"},
		{[]string{"smoke", "--image", "busybox", "--pod", "p"}, "--pod goes with a CONTAINER"},
		{[]string{"smoke", "c", "--tls-cert", "x"}, "--tls-cert and --tls-key go together"},
		{[]string{"bench", "c", "--size", "0"}, "--size must be positive"},
		{[]string{"bench", "c", "--runs", "-1"}, "--runs must be positive"},
		{[]string{"bench"}, "needs a CONTAINER"},
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

func TestDiagnosticsHelpHasExamplesAndExitStatus(t *testing.T) {
	for _, name := range []string{"probe", "smoke", "bench", "doctor"} {
		var out bytes.Buffer
		code := Main([]string{name, "--help"}, cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out, IsTerminalIn: func() bool { return false }})
		if code != 0 || !strings.Contains(out.String(), "EXIT STATUS") || !strings.Contains(out.String(), "Examples:") {
			t.Errorf("%s --help (exit %d) lacks EXIT STATUS or Examples:\n%s", name, code, out.String())
		}
	}
}
