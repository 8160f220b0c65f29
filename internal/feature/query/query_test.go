package query

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/client/clienttest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fixture: pods web (default) and db (prod), a container in each named
// nginx, and a sidecar in web.
func fixture(t *testing.T) *client.Client {
	t.Helper()
	f := &clienttest.Fake{}
	f.AddPod(&runtimeapi.PodSandbox{Id: "aaaa1111", State: runtimeapi.PodSandboxState_SANDBOX_READY, CreatedAt: 10,
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "web", Namespace: "default"}})
	f.AddPod(&runtimeapi.PodSandbox{Id: "aaaa2222", State: runtimeapi.PodSandboxState_SANDBOX_READY, CreatedAt: 20,
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "db", Namespace: "prod"}})
	for _, x := range []struct{ id, pod, name string }{
		{"bbbb1111", "aaaa1111", "nginx"}, {"bbbb2222", "aaaa1111", "sidecar"}, {"bbbc3333", "aaaa2222", "nginx"},
	} {
		f.AddContainer(&runtimeapi.Container{Id: x.id, PodSandboxId: x.pod, Metadata: &runtimeapi.ContainerMetadata{Name: x.name},
			State: runtimeapi.ContainerState_CONTAINER_RUNNING, Image: &runtimeapi.ImageSpec{Image: "busybox"}, CreatedAt: 11})
	}
	c, err := client.Dial(client.Settings{RuntimeEndpoint: clienttest.Serve(t, f), RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() }) // the test is over
	return c
}

func TestPSByPodAndQuiet(t *testing.T) {
	c := fixture(t)
	var out bytes.Buffer
	if err := PS(t.Context(), c, client.ContainerFilter{Pod: "web"}, ListOptions{Quiet: true}, output.Printer{Out: &out}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(out.String()); len(got) != 2 || strings.Contains(out.String(), "bbbc3333") {
		t.Errorf("ps -q --pod web: got %q, want web's two containers", out.String())
	}
	out.Reset()
	if err := PS(t.Context(), c, client.ContainerFilter{}, ListOptions{}, output.Printer{Out: &out, Format: output.JSON}); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Containers []struct{ ID, PodSandboxID string }
	}
	if err := json.Unmarshal(out.Bytes(), &list); err != nil || len(list.Containers) != 3 {
		t.Errorf("ps -o json: %v\n%s", err, out.String())
	}
	out.Reset()
	// The table names each container's pod and its namespace.
	if err := PS(t.Context(), c, client.ContainerFilter{}, ListOptions{Now: time.Unix(0, 11)}, output.Printer{Out: &out, Format: output.Table}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NAMESPACE", "prod", "db", "web"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("ps table lacks %q:\n%s", want, out.String())
		}
	}
	err := PS(t.Context(), c, client.ContainerFilter{Pod: "aaaa"}, ListOptions{}, output.Printer{Out: &out})
	var amb *client.AmbiguousError
	if !errors.As(err, &amb) || !strings.HasPrefix(err.Error(), "--pod: ") {
		t.Errorf("ps --pod aaaa: want an ambiguity about --pod; got %v", err)
	}
}

func TestInspectAmbiguousNamesPods(t *testing.T) {
	c := fixture(t)
	var out bytes.Buffer
	err := Inspect(t.Context(), c, []string{"nginx"}, false, time.Now(), output.Printer{Out: &out, Format: output.JSON})
	for _, want := range []string{"bbbb1111 (nginx, Running, pod default/web)", "bbbc3333 (nginx, Running, pod prod/db)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("inspect nginx: want the candidate %q; got %v", want, err)
		}
	}
	out.Reset()
	if err := Inspect(t.Context(), c, []string{"sidecar"}, false, time.Now(), output.Printer{Out: &out, Format: output.JSON}); err != nil {
		t.Fatal(err)
	}
	var st struct {
		Status struct{ ID string }
		Info   map[string]any
	}
	if err := json.Unmarshal(out.Bytes(), &st); err != nil || st.Status.ID != "bbbb2222" || st.Info["pid"] != 42.0 {
		t.Errorf("inspect sidecar: want its status and .info.pid at the top; got %v\n%s", err, out.String())
	}
}
