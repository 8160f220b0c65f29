package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
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

// --kubeconfig walks from the workstation: an API server that is not
// there is the first hop's finding, in the report's kubeconfig mode.
func TestDoctorKubeconfigUnreachableAPIServer(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u, namespace: shop}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := Main([]string{"-o", "json", "doctor", "--kubeconfig", kc, "web-0"}, cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, IsTerminalIn: func() bool { return false }})
	if code != cmdutil.ExitFailure {
		t.Fatalf("exit %d, want 1\nstdout: %s\nstderr: %s", code, out.String(), errOut.String())
	}
	var rep struct {
		Mode   string `json:"mode"`
		Target struct {
			Namespace string `json:"namespace"`
			Pod       string `json:"pod"`
		} `json:"target"`
		Hops []struct {
			Hop, Outcome, Cause string
		} `json:"hops"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if rep.Mode != "kubeconfig" || rep.Target.Namespace != "shop" || rep.Target.Pod != "web-0" || len(rep.Hops) != 1 || rep.Hops[0].Hop != "api-server" || rep.Hops[0].Outcome != "fail" {
		t.Fatalf("report: %+v", rep)
	}
	if !strings.Contains(errOut.String(), "broken at hop api-server") {
		t.Errorf("stderr: %s", errOut.String())
	}
}
