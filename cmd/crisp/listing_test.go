package main

// Layers 1 and 2 of the tests (docs/design.md, "Tests") for pods, ps,
// images, inspect and inspectp: flags parsed into options, and Run against a
// fake runtime (internal/client/clienttest) with buffers for streams and a
// pinned clock.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/cli/output"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/client/clienttest"
	"github.com/crisp-cri/crisp/internal/feature/query"
)

// listNow is the pinned clock: every fixture object is created relative to it.
var listNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

const (
	podWeb = "aaaa1111aaaa1111aaaa1111aaaa1111aaaa1111aaaa1111aaaa1111aaaa1111"
	podDB  = "aaaa2222aaaa2222aaaa2222aaaa2222aaaa2222aaaa2222aaaa2222aaaa2222"
	ctrWeb = "bbbb1111bbbb1111bbbb1111bbbb1111bbbb1111bbbb1111bbbb1111bbbb1111"
	ctrOld = "bbbb2222bbbb2222bbbb2222bbbb2222bbbb2222bbbb2222bbbb2222bbbb2222"
	ctrPG  = "cccc3333cccc3333cccc3333cccc3333cccc3333cccc3333cccc3333cccc3333"
	imgBB  = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	imgOld = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
)

func ago(d time.Duration) int64 { return listNow.Add(-d).UnixNano() }

// listFixture serves a fake runtime and returns a factory pointed at it with
// its output in buffers.
func listFixture(t *testing.T, output string) (*cmdutil.Factory, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	f := &clienttest.Fake{}
	f.AddPod(&runtimeapi.PodSandbox{Id: podWeb, State: runtimeapi.PodSandboxState_SANDBOX_READY, CreatedAt: ago(2 * time.Hour),
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "web", Namespace: "default", Attempt: 1}, Labels: map[string]string{"app": "web"}})
	f.AddPod(&runtimeapi.PodSandbox{Id: podDB, State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY, CreatedAt: ago(3 * time.Minute),
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "db", Namespace: "prod"}, Labels: map[string]string{"app": "db"}})
	f.AddContainer(&runtimeapi.Container{Id: ctrWeb, PodSandboxId: podWeb, State: runtimeapi.ContainerState_CONTAINER_RUNNING,
		CreatedAt: ago(70 * time.Minute), Metadata: &runtimeapi.ContainerMetadata{Name: "nginx", Attempt: 2},
		Image: &runtimeapi.ImageSpec{Image: "docker.io/library/nginx:1.25"}, Labels: map[string]string{"tier": "front"}})
	f.AddContainer(&runtimeapi.Container{Id: ctrOld, PodSandboxId: podWeb, State: runtimeapi.ContainerState_CONTAINER_EXITED,
		CreatedAt: ago(100 * time.Minute), Metadata: &runtimeapi.ContainerMetadata{Name: "init"},
		Image: &runtimeapi.ImageSpec{Image: imgBB}})
	f.AddContainer(&runtimeapi.Container{Id: ctrPG, PodSandboxId: podDB, State: runtimeapi.ContainerState_CONTAINER_CREATED,
		CreatedAt: ago(time.Minute), Metadata: &runtimeapi.ContainerMetadata{Name: "pg"},
		Image: &runtimeapi.ImageSpec{Image: "postgres:16"}})
	f.AddImage(&runtimeapi.Image{Id: imgBB, RepoTags: []string{"docker.io/library/busybox:1.36", "localhost:5000/busybox:dev"}, Size: 4_190_000,
		RepoDigests: []string{"docker.io/library/busybox@sha256:abcdefabcdefabcdefabcdef"}})
	f.AddImage(&runtimeapi.Image{Id: imgOld, RepoDigests: []string{"quay.io/old@sha256:0123"}, Size: 999})
	endpoint := clienttest.Serve(t, f)

	cfg := filepath.Join(t.TempDir(), "crictl.yaml")
	if err := os.WriteFile(cfg, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	fac := &cmdutil.Factory{
		Streams: cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, IsTerminalIn: func() bool { return false }},
		Global:  cmdutil.GlobalOptions{RuntimeEndpoint: endpoint, ConfigFile: cfg, Output: output},
		Getenv:  func(string) string { return "" },
	}
	return fac, &out, &errOut
}

type runner interface{ Run(context.Context) error }

// regexpComparer compares compiled filters by their source.
var regexpComparer = cmp.Comparer(func(a, b *regexp.Regexp) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.String() == b.String()
})

func TestPodsOptions(t *testing.T) {
	tests := []struct {
		args    []string
		output  string
		want    client.PodFilter
		wantErr string
	}{
		{args: nil, want: client.PodFilter{}},
		{args: []string{"--name", "^w", "--namespace", "prod", "--state", "NotReady", "--label", "a=b", "--label", "c=", "--id", "aa"},
			want: client.PodFilter{Name: regexp.MustCompile("^w"), Namespace: regexp.MustCompile("prod"), State: "NotReady",
				Labels: map[string]string{"a": "b", "c": ""}, ID: "aa"}},
		{args: []string{"--state", "gone"}, wantErr: "want one of ready, notready"},
		{args: []string{"--name", "("}, wantErr: "not a regular expression"},
		{args: []string{"--label", "=v"}, wantErr: "want key=value"},
		{args: []string{"-q"}, output: "json", wantErr: "cannot be combined with -o json"},
		{args: []string{"--last", "-1"}, wantErr: "--last must be"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			output := tt.output
			if output == "" {
				output = "table"
			}
			o := &podsOptions{Verb: cmdutil.Verb{F: &cmdutil.Factory{Global: cmdutil.GlobalOptions{Output: output}}}}
			cmd := podsCommand(o.F, o)
			if err := cmd.ParseFlags(tt.args); err != nil {
				t.Fatal(err)
			}
			err := o.Complete(o.F, nil, nil)
			if err == nil {
				err = o.Validate()
			}
			if tt.wantErr != "" {
				var ue cmdutil.UsageError
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.As(err, &ue) {
					t.Fatalf("error = %v, want a usage error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, o.filter, regexpComparer); diff != "" {
				t.Errorf("filter (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPsOptions(t *testing.T) {
	tests := []struct {
		args    []string
		want    psOptions
		wantErr string
	}{
		{args: nil, want: psOptions{}},
		{args: []string{"-a", "-p", "web", "--name", "x", "-s", "exited", "--label", "k=v", "--no-trunc"},
			want: psOptions{Select: cmdutil.ContainerSelectors{All: true, Pod: "web", Name: "x", State: "exited", Labels: []string{"k=v"}}, listFlags: listFlags{NoTrunc: true},
				filter: client.ContainerFilter{All: true, Pod: "web", Name: regexp.MustCompile("x"), State: "exited", Labels: map[string]string{"k": "v"}}}},
		{args: []string{"-l"}, want: psOptions{Select: cmdutil.ContainerSelectors{Latest: true}, filter: client.ContainerFilter{All: true, Last: 1}}},
		{args: []string{"-n", "3", "-q"}, want: psOptions{Select: cmdutil.ContainerSelectors{Last: 3}, listFlags: listFlags{Quiet: true}, filter: client.ContainerFilter{All: true, Last: 3}}},
		{args: []string{"--state", "paused"}, wantErr: "want one of created, running, exited, unknown"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			o := &psOptions{Verb: cmdutil.Verb{F: &cmdutil.Factory{Global: cmdutil.GlobalOptions{Output: "table"}}}}
			if err := psCommand(o.F, o).ParseFlags(tt.args); err != nil {
				t.Fatal(err)
			}
			err := o.Complete(o.F, nil, nil)
			if err == nil {
				err = o.Validate()
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, *o, cmp.AllowUnexported(psOptions{}), cmpopts.IgnoreFields(psOptions{}, "Verb", "now"),
				regexpComparer); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

// completeValidate is what runOptions does before Run.
func completeValidate(o commandOptions, f *cmdutil.Factory) func() error {
	return func() error {
		if err := o.Complete(f, nil, nil); err != nil {
			return err
		}
		return o.Validate()
	}
}

func runListing(t *testing.T, o runner, complete func() error) {
	t.Helper()
	if complete != nil {
		if err := complete(); err != nil {
			t.Fatal(err)
		}
	}
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestPodsRun(t *testing.T) {
	f, out, errOut := listFixture(t, "table")
	o := &podsOptions{Verb: cmdutil.Verb{F: f}, now: func() time.Time { return listNow }}
	runListing(t, o, completeValidate(o, o.F))
	want := `POD ID          CREATED         STATE      NAME   NAMESPACE   ATTEMPT   RUNTIME
aaaa2222aaaa2   3 minutes ago   NotReady   db     prod        0         (default)
aaaa1111aaaa1   2 hours ago     Ready      web    default     1         (default)
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	if errOut.Len() != 0 {
		t.Errorf("stderr: %s", errOut)
	}

	out.Reset()
	o = &podsOptions{Verb: cmdutil.Verb{F: f}, now: time.Now, listFlags: listFlags{Quiet: true}, Select: cmdutil.PodSelectors{State: "ready"}}
	runListing(t, o, completeValidate(o, o.F))
	if got := out.String(); got != podWeb+"\n" {
		t.Errorf("-q --state ready = %q", got)
	}

	f.Global.Output = "json"
	out.Reset()
	o = &podsOptions{Verb: cmdutil.Verb{F: f}, now: time.Now, Select: cmdutil.PodSelectors{Name: "^web$"}}
	runListing(t, o, completeValidate(o, o.F))
	var list struct {
		Items []struct {
			ID       string            `json:"id"`
			State    string            `json:"state"`
			Labels   map[string]string `json:"labels"`
			Metadata struct {
				Name    string `json:"name"`
				Attempt int    `json:"attempt"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(out.Bytes(), &list); err != nil {
		t.Fatalf("-o json is not JSON: %v\n%s", err, out)
	}
	if len(list.Items) != 1 || list.Items[0].ID != podWeb || list.Items[0].State != "SANDBOX_READY" ||
		list.Items[0].Metadata.Name != "web" || list.Items[0].Metadata.Attempt != 1 || list.Items[0].Labels["app"] != "web" {
		t.Errorf("-o json = %+v", list)
	}
}

func TestPsRun(t *testing.T) {
	f, out, _ := listFixture(t, "table")
	o := &psOptions{Verb: cmdutil.Verb{F: f}, now: func() time.Time { return listNow }, Select: cmdutil.ContainerSelectors{All: true}}
	runListing(t, o, completeValidate(o, o.F))
	want := `CONTAINER       IMAGE                          CREATED              STATE     NAME    ATTEMPT   POD ID          POD   NAMESPACE
cccc3333cccc3   postgres:16                    About a minute ago   Created   pg      0         aaaa2222aaaa2   db    prod
bbbb1111bbbb1   docker.io/library/nginx:1.25   About an hour ago    Running   nginx   2         aaaa1111aaaa1   web   default
bbbb2222bbbb2   1111111111111                  2 hours ago          Exited    init    0         aaaa1111aaaa1   web   default
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}

	// Running only by default; --pod by name; --no-trunc.
	out.Reset()
	o = &psOptions{Verb: cmdutil.Verb{F: f}, now: func() time.Time { return listNow }, Select: cmdutil.ContainerSelectors{Pod: "web"}, listFlags: listFlags{NoTrunc: true}}
	runListing(t, o, completeValidate(o, o.F))
	if !strings.Contains(out.String(), ctrWeb+"   docker.io/library/nginx:1.25") || strings.Contains(out.String(), ctrOld) {
		t.Errorf("ps --pod web --no-trunc:\n%s", out)
	}

	out.Reset()
	o = &psOptions{Verb: cmdutil.Verb{F: f}, now: time.Now, Select: cmdutil.ContainerSelectors{Pod: "nope"}}
	if err := completeValidate(o, o.F)(); err != nil {
		t.Fatal(err)
	}
	var nf *client.NotFoundError
	if err := o.Run(context.Background()); !errors.As(err, &nf) || !strings.Contains(err.Error(), "--pod: no pod matches") {
		t.Errorf("ps --pod nope = %v, want a NotFoundError about --pod", err)
	}

	f.Global.Output = "yaml"
	out.Reset()
	o = &psOptions{Verb: cmdutil.Verb{F: f}, now: time.Now, Select: cmdutil.ContainerSelectors{State: "created"}}
	runListing(t, o, completeValidate(o, o.F))
	for _, s := range []string{"containers:\n", "  state: CONTAINER_CREATED\n", "  id: " + ctrPG + "\n"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("-o yaml lacks %q:\n%s", s, out)
		}
	}
}

func TestImagesRun(t *testing.T) {
	f, out, _ := listFixture(t, "table")
	o := &imagesOptions{Verb: cmdutil.Verb{F: f}, Table: output.ImageTableOptions{Digests: true}}
	runListing(t, o, nil)
	want := `IMAGE                       TAG      DIGEST          IMAGE ID        SIZE
docker.io/library/busybox   1.36     abcdefabcdefa   1111111111111   4.19MB
localhost:5000/busybox      dev      abcdefabcdefa   1111111111111   4.19MB
quay.io/old                 <none>   0123            2222222222222   999B
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
	out.Reset()
	o = &imagesOptions{Verb: cmdutil.Verb{F: f}, Quiet: true, Ref: "docker.io/library/busybox:1.36"}
	runListing(t, o, nil)
	if out.String() != imgBB+"\n" {
		t.Errorf("images -q busybox = %q", out)
	}
}

func TestInspectRun(t *testing.T) {
	f, out, _ := listFixture(t, "json")
	o := &inspectOptions{Verb: cmdutil.Verb{F: f}, now: time.Now, run: query.Inspect, Refs: []string{"nginx"}, p: output.Printer{Out: out, Format: output.JSON}}
	runListing(t, o, nil)
	var got struct {
		Status struct {
			ID    string `json:"id"`
			State string `json:"state"`
		} `json:"status"`
		// crictl's shape: the runtime's "info" key sits beside "status".
		Info map[string]any `json:"info"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	// The verbose info's JSON value is decoded, not left as a string.
	if got.Status.ID != ctrWeb || got.Status.State != "CONTAINER_RUNNING" || got.Info["pid"] != float64(42) {
		t.Errorf("inspect nginx = %+v", got)
	}

	out.Reset()
	o = &inspectOptions{Verb: cmdutil.Verb{F: f}, now: func() time.Time { return listNow }, run: query.Inspect, Refs: []string{"bbbb1", "pg"}, p: output.Printer{Out: out, Format: output.Table}}
	runListing(t, o, nil)
	for _, s := range []string{"ID:          " + ctrWeb, "Name:        nginx", "Attempt:     2", "Labels:      tier=front", "\n\nID:          " + ctrPG, "State:       Created"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("inspect -o table lacks %q:\n%s", s, out)
		}
	}

	o = &inspectOptions{Verb: cmdutil.Verb{F: f}, now: time.Now, run: query.Inspect, Refs: []string{"bbbb"}, p: output.Printer{Out: out, Format: output.JSON}}
	var amb *client.AmbiguousError
	if err := o.Run(context.Background()); !errors.As(err, &amb) || len(amb.Candidates) != 2 {
		t.Errorf("inspect bbbb = %v, want an AmbiguousError listing 2 containers", err)
	}

	out.Reset()
	op := &inspectOptions{Verb: cmdutil.Verb{F: f}, now: time.Now, run: query.InspectPod, Refs: []string{"web", "aaaa2"}, p: output.Printer{Out: out, Format: output.JSON}}
	runListing(t, op, nil)
	var pods []struct {
		Status struct {
			ID string `json:"id"`
		} `json:"status"`
	}
	if err := json.Unmarshal(out.Bytes(), &pods); err != nil || len(pods) != 2 || pods[0].Status.ID != podWeb || pods[1].Status.ID != podDB {
		t.Errorf("inspectp web aaaa2 = %v, %s", err, out)
	}
}

// TestInspectDefaultsToJSON checks that inspect prints JSON unless -o is given,
// through the whole command.
func TestInspectDefaultsToJSON(t *testing.T) {
	f, out, errOut := listFixture(t, "table")
	global := []string{"--runtime-endpoint", f.Global.RuntimeEndpoint, "-c", f.Global.ConfigFile}
	root := newRootCommand(f)
	root.SetArgs(append(global, "inspectp", "db"))
	if err := root.Execute(); err != nil {
		t.Fatalf("%v: %s", err, errOut)
	}
	if !strings.HasPrefix(out.String(), "{\n") || !strings.Contains(out.String(), "\n  \"status\": {") {
		t.Errorf("inspectp without -o:\n%s", out)
	}
	out.Reset()
	root = newRootCommand(f)
	root.SetArgs(append(global, "inspectp", "-o", "table", "db"))
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "ID:") {
		t.Errorf("inspectp -o table:\n%s", out)
	}
}
