package containerd

import (
	"strings"
	"testing"
)

// crisp against containerd 1.6. New crisp tests go here (or in more files of
// this package): crisp(t, args...) runs the binary built from ./cmd/crisp with
// CONTAINER_RUNTIME_ENDPOINT set to the harness, crispCmd gives the *exec.Cmd
// for stdin pipes, port-forwards and attach (see startBackground).

func TestCrispVersion(t *testing.T) {
	suiteHarness(t)
	r := crisp(t, "version")
	if r.ExitCode != 0 {
		t.Fatalf("crisp version: %v", r)
	}
	for _, want := range []string{"containerd", "v1"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("crisp version lacks %q:\n%s", want, r.Stdout)
		}
	}
}
