package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client/clienttest"
)

// TestErrorLineEscapes: crisp's error line quotes what the runtime
// reported (here the candidates of an ambiguous ID, with their names); a
// name a tenant chose reaches the operator's terminal escaped. The old
// error line wrote it raw: the name set the window title.
func TestErrorLineEscapes(t *testing.T) {
	f := &clienttest.Fake{}
	f.AddPod(&runtimeapi.PodSandbox{Id: "aaaa1111", State: runtimeapi.PodSandboxState_SANDBOX_READY,
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "p\x1b]52;c;cm0K\a", Namespace: "default"}})
	for _, id := range []string{"bbbb1111", "bbbb2222"} {
		f.AddContainer(&runtimeapi.Container{Id: id, PodSandboxId: "aaaa1111", State: runtimeapi.ContainerState_CONTAINER_RUNNING,
			Metadata: &runtimeapi.ContainerMetadata{Name: "\x1b]0;PWNED\a"}, Image: &runtimeapi.ImageSpec{Image: "busybox"}})
	}
	cfg := filepath.Join(t.TempDir(), "crictl.yaml")
	if err := os.WriteFile(cfg, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	fac := &cmdutil.Factory{
		Streams: cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, IsTerminalIn: func() bool { return false }},
		Getenv:  func(string) string { return "" },
	}
	code, _, err := execute(t.Context(), fac, []string{"--runtime-endpoint", clienttest.Serve(t, f), "--config", cfg, "inspect", "bbbb"})
	if err == nil || code != cmdutil.ExitFailure {
		t.Fatalf("inspect bbbb: code %d, %v; want an ambiguity", code, err)
	}
	got := errOut.String()
	if strings.ContainsAny(got, "\x1b\a") {
		t.Errorf("the error line writes control bytes: %q", got)
	}
	for _, want := range []string{`\x1b]0;PWNED\x07`, `p\x1b]52;c;cm0K\x07`} {
		if !strings.Contains(got, want) {
			t.Errorf("the error line lacks %q: %q", want, got)
		}
	}
}
