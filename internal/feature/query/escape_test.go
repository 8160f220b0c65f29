package query

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/client/clienttest"
)

// What a hostile tenant names things: a window title (OSC 0) and a
// clipboard write (OSC 52), each ended by BEL; and how crisp shows them.
const (
	titleName   = "\x1b]0;PWNED\a"
	clipLabel   = "\x1b]52;c;cm0gLXJmIC8K\a"
	titleShown  = `\x1b]0;PWNED\x07`
	clipShown   = `\x1b]52;c;cm0gLXJmIC8K\x07`
	hostileNS   = "ns\x1b[2J"
	hostileTag  = "evil\x1b]0;T\a:latest"
	hostileUser = "u\x1b[31m"
)

// hostileFixture: a pod and a container named and labelled by a tenant
// with escape sequences, and an image tagged with one.
func hostileFixture(t *testing.T) *client.Client {
	t.Helper()
	f := &clienttest.Fake{}
	labels := map[string]string{"clip": clipLabel, "k\x1b]0;K\a": "v"}
	f.AddPod(&runtimeapi.PodSandbox{Id: "aaaa1111", State: runtimeapi.PodSandboxState_SANDBOX_READY, CreatedAt: 10,
		Metadata: &runtimeapi.PodSandboxMetadata{Name: titleName, Namespace: hostileNS, Uid: "uid" + clipLabel}, Labels: labels,
		Annotations: map[string]string{"a": clipLabel}, RuntimeHandler: "h" + titleName})
	f.AddContainer(&runtimeapi.Container{Id: "bbbb1111", PodSandboxId: "aaaa1111", Metadata: &runtimeapi.ContainerMetadata{Name: titleName},
		State: runtimeapi.ContainerState_CONTAINER_RUNNING, Image: &runtimeapi.ImageSpec{Image: "img" + clipLabel}, CreatedAt: 11,
		Labels: labels, Annotations: map[string]string{"a": clipLabel}})
	f.AddImage(&runtimeapi.Image{Id: "sha256:cccc", RepoTags: []string{hostileTag}, RepoDigests: []string{"evil@sha256:" + clipLabel}, Username: hostileUser})
	c, err := client.Dial(client.Settings{RuntimeEndpoint: clienttest.Serve(t, f), RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() }) // the test is over
	return c
}

// checkEscaped fails when text output carries a control byte, or lacks
// the escaped forms of what the tenant wrote.
func checkEscaped(t *testing.T, what, out string, want ...string) {
	t.Helper()
	for i := 0; i < len(out); i++ {
		if c := out[i]; c == 0x1b || c == 0x07 || c == 0x9b || c == '\r' {
			t.Errorf("%s writes control byte %#x to the terminal:\n%q", what, c, out)
			break
		}
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, out)
		}
	}
}

// TestTablesEscapeWhatTenantsName: ps, ps -v, pods, pods -v, images,
// images -v, inspect, inspectp and inspecti as tables show names, labels,
// namespaces, tags and handlers escaped. The old tables wrote them raw: a
// container could set the operator's window title or clipboard.
func TestTablesEscapeWhatTenantsName(t *testing.T) {
	c := hostileFixture(t)
	ctx := t.Context()
	table := func(do func(p output.Printer) error) string {
		t.Helper()
		var out bytes.Buffer
		if err := do(output.Printer{Out: &out, Format: output.Table}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	now := time.Unix(0, 12)
	checkEscaped(t, "ps", table(func(p output.Printer) error {
		return PS(ctx, c, client.ContainerFilter{}, ListOptions{Now: now}, p)
	}), titleShown, `img`+clipShown, `ns\x1b[2J`)
	checkEscaped(t, "ps -v", table(func(p output.Printer) error {
		return PS(ctx, c, client.ContainerFilter{}, ListOptions{Now: now, Verbose: true}, p)
	}), "Name: "+titleShown, "clip -> "+clipShown, `k\x1b]0;K\x07 -> v`, "a -> "+clipShown)
	checkEscaped(t, "pods", table(func(p output.Printer) error {
		return Pods(ctx, c, client.PodFilter{}, ListOptions{Now: now}, p)
	}), titleShown, `ns\x1b[2J`, "h"+titleShown)
	checkEscaped(t, "pods -v", table(func(p output.Printer) error {
		return Pods(ctx, c, client.PodFilter{}, ListOptions{Now: now, Verbose: true}, p)
	}), "Name: "+titleShown, "UID: uid"+clipShown, "clip -> "+clipShown, "Runtime: h"+titleShown)
	checkEscaped(t, "images", table(func(p output.Printer) error {
		return Images(ctx, c, "", false, output.ImageTableOptions{Digests: true}, p)
	}), `evil\x1b]0;T\x07`)
	checkEscaped(t, "images -v", table(func(p output.Printer) error {
		return Images(ctx, c, "", false, output.ImageTableOptions{Verbose: true}, p)
	}), `RepoTags: evil\x1b]0;T\x07:latest`, "RepoDigests: evil@sha256:"+clipShown, `Username: u\x1b[31m`)
	checkEscaped(t, "inspect -o table", table(func(p output.Printer) error {
		return Inspect(ctx, c, []string{"bbbb1111"}, false, now, p)
	}), titleShown, "clip="+clipShown)
	checkEscaped(t, "inspectp -o table", table(func(p output.Printer) error {
		return InspectPod(ctx, c, []string{"aaaa1111"}, false, now, p)
	}), titleShown, `ns\x1b[2J`, "clip="+clipShown)
	checkEscaped(t, "inspecti -o table", table(func(p output.Printer) error {
		return InspectImage(ctx, c, []string{"sha256:cccc"}, false, now, p)
	}), `evil\x1b]0;T\x07:latest`)
}

// TestJSONKeepsExactBytes: -o json (and yaml, go-template) are machine
// output: the tenant's bytes come back exactly, escaping is the reader's.
func TestJSONKeepsExactBytes(t *testing.T) {
	c := hostileFixture(t)
	var out bytes.Buffer
	if err := PS(t.Context(), c, client.ContainerFilter{}, ListOptions{}, output.Printer{Out: &out, Format: output.JSON}); err != nil {
		t.Fatal(err)
	}
	var list struct {
		Containers []struct {
			Metadata struct{ Name string }
			Labels   map[string]string
		}
	}
	if err := json.Unmarshal(out.Bytes(), &list); err != nil || len(list.Containers) != 1 {
		t.Fatalf("ps -o json: %v\n%s", err, out.String())
	}
	if got := list.Containers[0]; got.Metadata.Name != titleName || got.Labels["clip"] != clipLabel {
		t.Errorf("ps -o json changed the bytes: name %q, label %q", got.Metadata.Name, got.Labels["clip"])
	}
	out.Reset()
	if err := Pods(t.Context(), c, client.PodFilter{}, ListOptions{}, output.Printer{Out: &out, Format: output.GoTemplate, Template: "{{range .items}}{{.metadata.name}}{{end}}"}); err != nil {
		t.Fatal(err)
	}
	if out.String() != titleName+"\n" {
		t.Errorf("pods -o go-template: %q, want the exact name", out.String())
	}
	out.Reset()
	if err := Inspect(t.Context(), c, []string{"bbbb1111"}, true, time.Now(), output.Printer{Out: &out, Format: output.JSON}); err != nil {
		t.Fatal(err)
	}
	var st struct {
		Status struct {
			Metadata struct{ Name string }
			Labels   map[string]string
		}
	}
	if err := json.Unmarshal(out.Bytes(), &st); err != nil || st.Status.Metadata.Name != titleName || st.Status.Labels["clip"] != clipLabel {
		t.Errorf("inspect -o json: %v; name %q label %q", err, st.Status.Metadata.Name, st.Status.Labels["clip"])
	}
}
