package client

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client/clienttest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fixture is a fake runtime with two pods and four containers:
//
//	pod aaaa1111 "web" ns default, ready, app=web
//	pod aaaa2222 "db"  ns prod, not ready, app=db
//	ctr bbbb1111 "nginx"   in web, running, tier=front
//	ctr bbbb2222 "sidecar" in web, exited
//	ctr bbbc3333 "nginx"   in db,  running (same name as bbbb1111)
//	ctr cccc4444 "pg"      in db,  created
func fixture(t *testing.T, ignoreFilters bool) (*Client, *clienttest.Fake) {
	t.Helper()
	f := &clienttest.Fake{IgnoreFilters: ignoreFilters}
	f.AddPod(&runtimeapi.PodSandbox{Id: "aaaa1111", State: runtimeapi.PodSandboxState_SANDBOX_READY, CreatedAt: 10,
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "web", Namespace: "default"}, Labels: map[string]string{"app": "web"}})
	f.AddPod(&runtimeapi.PodSandbox{Id: "aaaa2222", State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY, CreatedAt: 20,
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "db", Namespace: "prod"}, Labels: map[string]string{"app": "db"}})
	add := func(id, pod, name string, state runtimeapi.ContainerState, created int64, labels map[string]string) {
		image, ref := "busybox", "sha256:1111"
		if name == "sidecar" {
			image, ref = "docker.io/library/alpine:3", "sha256:3333"
		}
		f.AddContainer(&runtimeapi.Container{Id: id, PodSandboxId: pod, State: state, CreatedAt: created, Labels: labels,
			Metadata: &runtimeapi.ContainerMetadata{Name: name}, Image: &runtimeapi.ImageSpec{Image: image}, ImageRef: ref})
	}
	add("bbbb1111", "aaaa1111", "nginx", runtimeapi.ContainerState_CONTAINER_RUNNING, 11, map[string]string{"tier": "front"})
	add("bbbb2222", "aaaa1111", "sidecar", runtimeapi.ContainerState_CONTAINER_EXITED, 12, nil)
	add("bbbc3333", "aaaa2222", "nginx", runtimeapi.ContainerState_CONTAINER_RUNNING, 21, nil)
	add("cccc4444", "aaaa2222", "pg", runtimeapi.ContainerState_CONTAINER_CREATED, 22, nil)
	f.AddImage(&runtimeapi.Image{Id: "sha256:1111", RepoTags: []string{"docker.io/library/busybox:latest"}, Size: 1000})
	f.AddImage(&runtimeapi.Image{Id: "sha256:2222", Size: 5})
	f.AddImage(&runtimeapi.Image{Id: "sha256:3333", RepoTags: []string{"docker.io/library/alpine:3"}, Size: 2000})
	endpoint := clienttest.Serve(t, f)
	c, err := Dial(Settings{RuntimeEndpoint: endpoint, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, f
}

func podIDs(pods []*runtimeapi.PodSandbox) []string {
	var ids []string
	for _, p := range pods {
		ids = append(ids, p.Id)
	}
	return ids
}

func containerIDs(ctrs []*runtimeapi.Container) []string {
	var ids []string
	for _, c := range ctrs {
		ids = append(ids, c.Id)
	}
	return ids
}

func TestListPods(t *testing.T) {
	tests := []struct {
		name   string
		filter PodFilter
		want   []string
	}{
		{name: "all, newest first", want: []string{"aaaa2222", "aaaa1111"}},
		{name: "name regexp", filter: PodFilter{Name: regexp.MustCompile("^w")}, want: []string{"aaaa1111"}},
		{name: "namespace", filter: PodFilter{Namespace: regexp.MustCompile("prod")}, want: []string{"aaaa2222"}},
		{name: "ready", filter: PodFilter{State: "ready"}, want: []string{"aaaa1111"}},
		{name: "notready any case", filter: PodFilter{State: "NotReady"}, want: []string{"aaaa2222"}},
		{name: "label", filter: PodFilter{Labels: map[string]string{"app": "db"}}, want: []string{"aaaa2222"}},
		{name: "label value differs", filter: PodFilter{Labels: map[string]string{"app": "nope"}}},
		{name: "id prefix", filter: PodFilter{ID: "aaaa1"}, want: []string{"aaaa1111"}},
	}
	for _, ignore := range []bool{false, true} {
		c, _ := fixture(t, ignore)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := c.ListPods(context.Background(), tt.filter)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, podIDs(got)); diff != "" {
					t.Errorf("runtime ignores filters: %v; pods (-want +got):\n%s", ignore, diff)
				}
			})
		}
	}
	c, _ := fixture(t, false)
	if _, err := c.ListPods(context.Background(), PodFilter{State: "sleepy"}); err == nil || !strings.Contains(err.Error(), "ready, notready") {
		t.Errorf("bad state error = %v, want one listing the states", err)
	}
}

func TestListContainers(t *testing.T) {
	tests := []struct {
		name   string
		filter ContainerFilter
		want   []string
	}{
		{name: "running only by default", want: []string{"bbbc3333", "bbbb1111"}},
		{name: "all", filter: ContainerFilter{All: true}, want: []string{"cccc4444", "bbbc3333", "bbbb2222", "bbbb1111"}},
		{name: "state exited", filter: ContainerFilter{State: "exited"}, want: []string{"bbbb2222"}},
		{name: "state beats all", filter: ContainerFilter{State: "created", All: true}, want: []string{"cccc4444"}},
		{name: "pod", filter: ContainerFilter{PodID: "aaaa1111", All: true}, want: []string{"bbbb2222", "bbbb1111"}},
		{name: "name", filter: ContainerFilter{Name: regexp.MustCompile("^nginx$")}, want: []string{"bbbc3333", "bbbb1111"}},
		{name: "label", filter: ContainerFilter{Labels: map[string]string{"tier": "front"}}, want: []string{"bbbb1111"}},
		{name: "id prefix", filter: ContainerFilter{ID: "bbbb", All: true}, want: []string{"bbbb2222", "bbbb1111"}},
		{name: "image by name", filter: ContainerFilter{Image: "busybox", All: true}, want: []string{"cccc4444", "bbbc3333", "bbbb1111"}},
		{name: "image by ID", filter: ContainerFilter{Image: "sha256:3333", All: true}, want: []string{"bbbb2222"}},
		{name: "image nobody uses", filter: ContainerFilter{Image: "nope", All: true}},
	}
	for _, ignore := range []bool{false, true} {
		c, _ := fixture(t, ignore)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := c.ListContainers(context.Background(), tt.filter)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, containerIDs(got)); diff != "" {
					t.Errorf("runtime ignores filters: %v; containers (-want +got):\n%s", ignore, diff)
				}
			})
		}
	}
}

func TestListImages(t *testing.T) {
	c, _ := fixture(t, false)
	got, err := c.ListImages(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, img := range got {
		ids = append(ids, img.Id)
	}
	// The runtime's order.
	if diff := cmp.Diff([]string{"sha256:1111", "sha256:2222", "sha256:3333"}, ids); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
	got, err = c.ListImages(context.Background(), "docker.io/library/busybox")
	if err != nil || len(got) != 1 || got[0].Id != "sha256:1111" {
		t.Errorf("ListImages(busybox) = %v, %v; want sha256:1111", got, err)
	}
}

// SortImages orders as crictl images does: tagged images by first tag,
// and an untagged one, compared by ID with its neighbours, stays where the
// runtime's order and the sort's steps leave it (the same for crictl,
// which sorts the same way).
func TestSortImages(t *testing.T) {
	busybox := &runtimeapi.Image{Id: "sha256:1111", RepoTags: []string{"docker.io/library/busybox:latest"}}
	untagged := &runtimeapi.Image{Id: "sha256:2222"}
	alpine := &runtimeapi.Image{Id: "sha256:3333", RepoTags: []string{"docker.io/library/alpine:3"}}
	digested := &runtimeapi.Image{Id: "sha256:0000", RepoDigests: []string{"docker.io/library/x@sha256:ffff"}}
	for _, tc := range []struct {
		in, want []*runtimeapi.Image
	}{
		{in: []*runtimeapi.Image{busybox, alpine}, want: []*runtimeapi.Image{alpine, busybox}},
		{in: []*runtimeapi.Image{busybox, untagged, alpine}, want: []*runtimeapi.Image{busybox, untagged, alpine}},
		{in: []*runtimeapi.Image{untagged, busybox, alpine}, want: []*runtimeapi.Image{busybox, untagged, alpine}},
		{in: []*runtimeapi.Image{alpine, busybox, untagged}, want: []*runtimeapi.Image{alpine, busybox, untagged}},
		{in: []*runtimeapi.Image{untagged, digested}, want: []*runtimeapi.Image{digested, untagged}},
	} {
		got := slices.Clone(tc.in)
		SortImages(got)
		ids := func(imgs []*runtimeapi.Image) (out []string) {
			for _, img := range imgs {
				out = append(out, img.GetId())
			}
			return out
		}
		if diff := cmp.Diff(ids(tc.want), ids(got)); diff != "" {
			t.Errorf("SortImages(%v) (-want +got):\n%s", ids(tc.in), diff)
		}
	}
}

func TestResolve(t *testing.T) {
	c, _ := fixture(t, false)
	ctx := context.Background()
	ctrTests := []struct {
		ref, want string
		wantErr   []string
	}{
		{ref: "bbbb1111", want: "bbbb1111"},
		{ref: "sidecar", want: "bbbb2222"},
		{ref: "cccc", want: "cccc4444"},
		{ref: "pg", want: "cccc4444"},
		{ref: "bbbc", want: "bbbc3333"},
		// Two containers are named nginx: both listed.
		{ref: "nginx", wantErr: []string{`"nginx" matches 2 containers`, "bbbb1111 (nginx, Running, pod default/web)", "bbbc3333 (nginx, Running, pod prod/db)"}},
		{ref: "bbb", wantErr: []string{"matches 3 containers", "bbbb1111 (nginx, ", "bbbb2222 (sidecar, ", "bbbc3333 (nginx, ", ", pod ", "give more of the ID"}},
		{ref: "zzz", wantErr: []string{`no container matches "zzz"`, c.Endpoint, "crisp ps -a"}},
	}
	for _, tt := range ctrTests {
		got, err := c.ResolveContainer(ctx, tt.ref)
		if tt.wantErr != nil {
			if err == nil {
				t.Errorf("ResolveContainer(%q) = %s, want an error", tt.ref, got.Id)
				continue
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("ResolveContainer(%q) error %q lacks %q", tt.ref, err, s)
				}
			}
			continue
		}
		if err != nil || got.Id != tt.want {
			t.Errorf("ResolveContainer(%q) = %v, %v; want %s", tt.ref, got, err, tt.want)
		}
	}

	var amb *AmbiguousError
	if _, err := c.ResolvePod(ctx, "aaaa"); !errors.As(err, &amb) || len(amb.Candidates) != 2 {
		t.Errorf("ResolvePod(aaaa) = %v, want an AmbiguousError with 2 candidates", err)
	}
	if p, err := c.ResolvePod(ctx, "db"); err != nil || p.Id != "aaaa2222" {
		t.Errorf("ResolvePod(db) = %v, %v", p, err)
	}
	var nf *NotFoundError
	if _, err := c.ResolvePod(ctx, "nope"); !errors.As(err, &nf) || !strings.Contains(err.Error(), "crisp pods") {
		t.Errorf("ResolvePod(nope) = %v, want a NotFoundError pointing at crisp pods", err)
	}
}

// TestResolvePrecedence: an exact ID wins over a name that equals it, and a
// unique name wins over an ID prefix that is ambiguous.
func TestResolvePrecedence(t *testing.T) {
	items := []candidate[string]{
		{id: "abc123", name: "x", item: "first"},
		{id: "abd456", name: "abc123", item: "second"},
		{id: "ff0001", name: "ab", item: "third"},
	}
	items = append(items,
		candidate[string]{id: "e1", name: "app", item: "exited attempt"},
		candidate[string]{id: "e2", name: "app", item: "running attempt", live: true},
		candidate[string]{id: "e3", name: "app", item: "another exited attempt"})
	for ref, want := range map[string]string{"abc123": "first", "ab": "third", "abd": "second", "app": "running attempt"} {
		got, err := pick("container", ref, "unix:///x", items)
		if err != nil || got != want {
			t.Errorf("pick(%q) = %q, %v; want %q", ref, got, err, want)
		}
	}
	// Two live matches stay ambiguous.
	items = append(items, candidate[string]{id: "e4", name: "app", item: "second running", live: true})
	var amb *AmbiguousError
	if _, err := pick("container", "app", "unix:///x", items); !errors.As(err, &amb) || len(amb.Candidates) != 4 {
		t.Errorf("pick(app) with two running = %v, want an AmbiguousError listing all 4", err)
	}
}

func TestStatusCalls(t *testing.T) {
	c, _ := fixture(t, false)
	ctx := context.Background()
	cs, err := c.ContainerStatus(ctx, "bbbb1111", true)
	if err != nil || cs.GetStatus().GetId() != "bbbb1111" || cs.GetInfo()["info"] == "" {
		t.Errorf("ContainerStatus = %v, %v", cs, err)
	}
	ps, err := c.PodStatus(ctx, "aaaa1111", false)
	if err != nil || ps.GetStatus().GetMetadata().GetName() != "web" {
		t.Errorf("PodStatus = %v, %v", ps, err)
	}
	if _, err := c.PodStatus(ctx, "gone", false); err == nil || !strings.Contains(err.Error(), "pod status of gone") || !strings.Contains(err.Error(), "NotFound") {
		t.Errorf("PodStatus(gone) error = %v, want one naming the call and the code", err)
	}
	if _, err := c.InspectImage(ctx, "alpine:9", false); err == nil || !strings.Contains(err.Error(), `no image "alpine:9"`) {
		t.Errorf("InspectImage(missing) = %v", err)
	}
	img, err := c.InspectImage(ctx, "sha256:3333", true)
	if err != nil || img.GetImage().GetRepoTags()[0] != "docker.io/library/alpine:3" {
		t.Errorf("InspectImage = %v, %v", img, err)
	}
}

func TestLifecycle(t *testing.T) {
	c, f := fixture(t, false)
	ctx := context.Background()
	podCfg := PodConfig("smoke", "", "", map[string]string{"crisp": "smoke"})
	podID, err := c.RunPod(ctx, podCfg, "")
	if err != nil {
		t.Fatal(err)
	}
	ref, pulled, err := c.PullImage(ctx, "docker.io/library/busybox:latest", podCfg)
	if err != nil || pulled || ref != "sha256:1111" {
		t.Errorf("PullImage(present) = %q, %v, %v; want no pull", ref, pulled, err)
	}
	if _, pulled, err := c.PullImage(ctx, "example.com/new:1", podCfg); err != nil || !pulled {
		t.Errorf("PullImage(missing) pulled=%v err=%v; want a pull", pulled, err)
	}
	ctrID, err := c.CreateContainer(ctx, podID, ContainerConfig("main", "example.com/new:1", []string{"sleep", "9"}, false, true), podCfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.StartContainer(ctx, ctrID); err != nil {
		t.Fatal(err)
	}
	running, err := c.ListContainers(ctx, ContainerFilter{PodID: podID})
	if err != nil || len(running) != 1 {
		t.Fatalf("running containers in the new pod = %v, %v", running, err)
	}
	if err := c.Cleanup(ctx, podID, ctrID); err != nil {
		t.Fatal(err)
	}
	calls := f.Calls()
	tail := calls[len(calls)-4:]
	want := []string{"StopContainer " + ctrID, "RemoveContainer " + ctrID, "StopPodSandbox " + podID, "RemovePodSandbox " + podID}
	if diff := cmp.Diff(want, tail); diff != "" {
		t.Errorf("cleanup calls (-want +got):\n%s", diff)
	}
	if _, err := c.ResolvePod(ctx, "smoke"); err == nil {
		t.Error("pod still there after Cleanup")
	}
}

func TestUnreachable(t *testing.T) {
	c, err := Dial(Settings{RuntimeEndpoint: "unix:///nonexistent/crisp-test.sock", RequestTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }() // a test client
	_, err = c.ListPods(context.Background(), PodFilter{})
	for _, s := range []string{"listing pods", "unix:///nonexistent/crisp-test.sock", "unreachable", "CONTAINER_RUNTIME_ENDPOINT"} {
		if err == nil || !strings.Contains(err.Error(), s) {
			t.Errorf("error %v lacks %q", err, s)
		}
	}
}
