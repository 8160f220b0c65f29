package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/testsupport/crossval"
)

// shape lists every path of a JSON document with its value's type, as the
// cross-validation against crictl compares them.
func shape(t *testing.T, data []byte) []string {
	t.Helper()
	paths, err := crossval.Paths(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	return paths
}

func printJSON(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := (Printer{Out: &buf, Format: JSON}).Print(v, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The objects the mock runtime served when testdata/crictl was recorded.
const (
	podID = "3b0d2ed357576108d5caecab2bdf790260697a5d035e818e396bdad4d43fe0bc"
	ctrID = "be8310933e5de33e84cc8737b30191ce5021cfaffe356f6db4e457eee904fb54"
	imgID = "sha256:658591b61fa8f54fc947664437afcb941292a70199d41918b515883e5f4c7474"
	image = "registry.k8s.io/e2e-test-images/busybox:1.29-2"
)

func fixtureImage() *runtimeapi.Image {
	return &runtimeapi.Image{Id: imgID, RepoTags: []string{image}, Size: 4194304, Spec: &runtimeapi.ImageSpec{Image: image}}
}

func fixtureContainer() *runtimeapi.Container {
	return &runtimeapi.Container{Id: ctrID, PodSandboxId: podID, Metadata: &runtimeapi.ContainerMetadata{Name: "nginx"},
		Image: &runtimeapi.ImageSpec{Image: image, UserSpecifiedImage: image}, ImageRef: imgID, ImageId: imgID,
		State: runtimeapi.ContainerState_CONTAINER_RUNNING, CreatedAt: 1796086715120878298}
}

func fixturePod() *runtimeapi.PodSandbox {
	return &runtimeapi.PodSandbox{Id: podID, Metadata: &runtimeapi.PodSandboxMetadata{Name: "web", Uid: "u1", Namespace: "default", Attempt: 1},
		State: runtimeapi.PodSandboxState_SANDBOX_READY, CreatedAt: 1796086715078916886, Labels: map[string]string{"app": "web"}}
}

// must is for fixtures whose encoding cannot fail.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func newStatus(t *testing.T, status map[string]any, info map[string]string) Status {
	t.Helper()
	st, err := NewStatus(status, info)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestShapesMatchCrictl builds crisp's JSON for the objects crictl printed
// in testdata/crictl and requires the same keys with the same types.
func TestShapesMatchCrictl(t *testing.T) {
	ctrStatus := &runtimeapi.ContainerStatus{Id: ctrID, Metadata: &runtimeapi.ContainerMetadata{Name: "nginx"},
		State: runtimeapi.ContainerState_CONTAINER_RUNNING, CreatedAt: 1796086715120878298, StartedAt: 1796086715140216612,
		Image: &runtimeapi.ImageSpec{Image: image, UserSpecifiedImage: image}, ImageRef: imgID, ImageId: imgID,
		LogPath: "/tmp/outcfg/logs/nginx.log"}
	podStatus := &runtimeapi.PodSandboxStatus{Id: podID, Metadata: fixturePod().GetMetadata(), State: runtimeapi.PodSandboxState_SANDBOX_READY,
		CreatedAt: 1796086715078916886, Network: &runtimeapi.PodSandboxNetworkStatus{Ip: "127.0.0.1"},
		Linux:  &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{Options: &runtimeapi.NamespaceOption{}}},
		Labels: map[string]string{"app": "web"}}
	runtimeStatus := &runtimeapi.StatusResponse{
		Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
			{Type: "RuntimeReady", Status: true}, {Type: "NetworkReady", Status: true}}},
		Info: map[string]string{"config": `{"profile":"full","streamServerAddress":"127.0.0.1:37027"}`},
	}
	info, err := RuntimeStatus(runtimeStatus)
	if err != nil {
		t.Fatal(err)
	}
	fs := &runtimeapi.ImageFsInfoResponse{ImageFilesystems: []*runtimeapi.FilesystemUsage{{
		Timestamp: 1, FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: "/tmp/x"},
		UsedBytes: &runtimeapi.UInt64Value{}, InodesUsed: &runtimeapi.UInt64Value{}}}}

	for name, got := range map[string]any{
		"inspect": newStatus(t, must(ContainerStatusJSON(ctrStatus)), map[string]string{
			"info": `{"command":["/bin/sleep","1000"],"pid":20979,"runtime":"crisp-mock","sandboxID":"` + podID + `"}`}),
		"inspectp": newStatus(t, must(PodStatusJSON(podStatus)), map[string]string{
			"info": `{"network":"host loopback","runtime":"crisp-mock","runtimeHandler":""}`}),
		"inspecti":    newStatus(t, must(ImageStatusJSON(fixtureImage())), nil),
		"info":        info,
		"ps":          must(ProtoJSON(&runtimeapi.ListContainersResponse{Containers: []*runtimeapi.Container{fixtureContainer()}})),
		"pods":        must(ProtoJSON(&runtimeapi.ListPodSandboxResponse{Items: []*runtimeapi.PodSandbox{fixturePod()}})),
		"images":      must(ProtoJSON(&runtimeapi.ListImagesResponse{Images: []*runtimeapi.Image{fixtureImage()}})),
		"imagefsinfo": map[string]any{"status": must(ProtoJSON(fs))},
	} {
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "crictl", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(shape(t, want), shape(t, printJSON(t, got))); diff != "" {
				t.Errorf("crisp's %s JSON differs from crictl's in keys or types (-crictl +crisp):\n%s", name, diff)
			}
		})
	}
}

// TestInspectInfoAtTopLevel is the script everyone writes:
// crisp inspect C | jq .info.pid.
func TestInspectInfoAtTopLevel(t *testing.T) {
	st := newStatus(t, map[string]any{}, map[string]string{"info": `{"pid":42}`, "quoted": `"text"`, "list": `[1]`})
	var got struct {
		Info   struct{ Pid int }
		Quoted string
		List   string
	}
	if err := json.Unmarshal(printJSON(t, st), &got); err != nil {
		t.Fatal(err)
	}
	// Only objects are decoded; crictl leaves other values as strings
	// without their quotes.
	if got.Info.Pid != 42 || got.Quoted != "text" || got.List != "[1]" {
		t.Errorf("got %+v", got)
	}
	if _, err := NewStatus(nil, map[string]string{"bad": "{not json"}); err == nil {
		t.Error("a value that starts like an object but is not JSON should be an error")
	}
}

func TestRuntimeStatusHandlersAndFeatures(t *testing.T) {
	st, err := RuntimeStatus(&runtimeapi.StatusResponse{
		RuntimeHandlers: []*runtimeapi.RuntimeHandler{{Name: "runc", Features: &runtimeapi.RuntimeHandlerFeatures{RecursiveReadOnlyMounts: true}}},
		Features:        &runtimeapi.RuntimeFeatures{SupplementalGroupsPolicy: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := string(printJSON(t, st))
	for _, want := range []string{`"runtimeHandlers": [`, `"recursive_read_only_mounts": true`, `"supplemental_groups_policy": true`, `"status": {}`} {
		if !strings.Contains(got, want) {
			t.Errorf("info lacks %s:\n%s", want, got)
		}
	}
}

func TestContainerStatusTimes(t *testing.T) {
	for _, tt := range []struct {
		state             runtimeapi.ContainerState
		started, finished bool
	}{
		{runtimeapi.ContainerState_CONTAINER_CREATED, false, false},
		{runtimeapi.ContainerState_CONTAINER_RUNNING, true, false},
		{runtimeapi.ContainerState_CONTAINER_EXITED, true, true},
	} {
		m, err := ContainerStatusJSON(&runtimeapi.ContainerStatus{State: tt.state, CreatedAt: 1e18, StartedAt: 2e18, FinishedAt: 3e18})
		if err != nil {
			t.Fatal(err)
		}
		zero := "0001-01-01T00:00:00Z"
		if (m["startedAt"] != zero) != tt.started || (m["finishedAt"] != zero) != tt.finished {
			t.Errorf("%s: startedAt %v finishedAt %v", tt.state, m["startedAt"], m["finishedAt"])
		}
		if m["resources"] != nil || !hasKey(m, "resources") {
			t.Errorf("%s: resources should be present and null, as crictl prints it", tt.state)
		}
	}
}

func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }

func ExamplePrinter_goTemplate() {
	p := Printer{Out: os.Stdout, Format: GoTemplate, Template: `{{.status.id}} {{upper .status.state}} {{json .status.labels}}`}
	err := p.Print(map[string]any{"status": map[string]any{"id": "abc", "state": "running", "labels": map[string]string{"a": "b"}}}, nil)
	fmt.Println(err)
	// Output:
	// abc RUNNING {"a":"b"}
	// <nil>
}
