package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
)

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
