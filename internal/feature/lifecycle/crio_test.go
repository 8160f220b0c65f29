package lifecycle

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
)

// crioClient is a client of the mock runtime imitating CRI-O.
func crioClient(t *testing.T) *client.Client {
	t.Helper()
	env := mocktest.Start(t, mockruntime.Config{Quirks: mockruntime.CRIO})
	c, err := client.Dial(client.Settings{RuntimeEndpoint: env.Endpoint, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() }) // the test is over
	return c
}

// CRI-O answers a RunPodSandbox whose metadata matches an existing pod with
// that pod's ID. A run that then fails must leave that pod alone: it made
// nothing but the container (here not even that).
func TestRunLeavesAPodItDidNotCreate(t *testing.T) {
	c := crioClient(t)
	ctrPath, _ := configs(t)
	podPath := podWithUID(t)
	podCfg := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "default", Uid: "u1"}}
	before, err := c.RunPod(t.Context(), podCfg, "")
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	// The image is missing and may not be pulled: the run fails after RunPodSandbox.
	err = Run(t.Context(), c, ctrPath, podPath, "", Pull{Policy: PullNever}, &out, &errOut)
	if err == nil {
		t.Fatalf("Run of a missing image with pulls off: want a failure; stdout %q", out.String())
	}
	if strings.Contains(errOut.String(), "removed pod") {
		t.Errorf("Run said it removed a pod it did not create: %q", errOut.String())
	}
	if !strings.Contains(errOut.String(), "existed already") || !strings.Contains(errOut.String(), "left pod "+before) {
		t.Errorf("Run's stderr %q: want it to say the pod existed and was left in place", errOut.String())
	}
	pods, err := c.ListPods(t.Context(), client.PodFilter{})
	if err != nil || len(pods) != 1 || pods[0].GetId() != before || pods[0].GetState() != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Fatalf("after the failed run: want the earlier pod %s ready; got %v %v", before, pods, err)
	}
}

// The same on a run whose container was created and failed to start: the
// container (this run's) goes, the pod (not this run's) stays.
func TestRunRemovesItsContainerFromAPodItDidNotCreate(t *testing.T) {
	c := crioClient(t)
	dir := t.TempDir()
	podPath := podWithUID(t)
	ctrPath := filepath.Join(dir, "ctr.json")
	if err := os.WriteFile(ctrPath, []byte(`{"metadata": {"name": "c"}, "image": {"image": "`+mockruntime.DefaultImage+`"}, "command": ["sleep", "600"], "log_path": "c.log"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// The earlier pod's log folder cannot be made: its containers are
	// created, and fail to start.
	podCfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "default", Uid: "u1"},
		LogDirectory: "/proc/crisp-no-such-folder",
	}
	before, err := c.RunPod(t.Context(), podCfg, "")
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := Run(t.Context(), c, ctrPath, podPath, "", Pull{Policy: PullNever}, &out, &errOut); err == nil {
		t.Fatalf("Run of a command that does not exist: want a failure; stdout %q", out.String())
	}
	if !strings.Contains(errOut.String(), "removed container") || !strings.Contains(errOut.String(), "left pod "+before) {
		t.Errorf("Run's stderr %q: want the container removed and the pod left", errOut.String())
	}
	pods, err := c.ListPods(t.Context(), client.PodFilter{})
	if err != nil || len(pods) != 1 || pods[0].GetId() != before {
		t.Fatalf("after the failed run: want the earlier pod %s; got %v %v", before, pods, err)
	}
	ctrs, err := c.ListContainers(t.Context(), client.ContainerFilter{All: true})
	if err != nil || len(ctrs) != 0 {
		t.Errorf("containers left behind: %v %v", ctrs, err)
	}
}

// A runtime that verifies signatures (CRI-O with signature_policy) needs
// image.user_specified_image on CreateContainer: create and run set it.
func TestCreateAndRunSetUserSpecifiedImage(t *testing.T) {
	c := crioClient(t)
	dir := t.TempDir()
	podPath := filepath.Join(dir, "pod.yaml")
	ctrPath := filepath.Join(dir, "ctr.json")
	if err := os.WriteFile(podPath, []byte("metadata: {name: p, namespace: default}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ctrPath, []byte(`{"metadata": {"name": "c"}, "image": {"image": "`+mockruntime.DefaultImage+`"}, "command": ["sleep", "600"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if err := Run(t.Context(), c, ctrPath, podPath, "", Pull{Policy: PullNever}, &out, &errOut); err != nil {
		t.Fatalf("run on a runtime that verifies signatures: %v (stderr %q)", err, errOut.String())
	}
	pods, err := c.ListPods(t.Context(), client.PodFilter{})
	if err != nil || len(pods) != 1 {
		t.Fatalf("pods: %v %v", pods, err)
	}
	out.Reset()
	if err := Create(t.Context(), c, pods[0].GetId(), ctrPathNamed(t, dir, "c2"), podPath, Pull{Policy: PullNever}, &out, &errOut); err != nil {
		t.Fatalf("create on a runtime that verifies signatures: %v (stderr %q)", err, errOut.String())
	}
}

// podWithUID writes a pod config with a fixed uid (without one, crisp makes
// one up, and no two runs' metadata match).
func podWithUID(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pod.yaml")
	if err := os.WriteFile(p, []byte("metadata: {name: p, namespace: default, uid: u1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func ctrPathNamed(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name+".json")
	if err := os.WriteFile(p, []byte(`{"metadata": {"name": "`+name+`"}, "image": {"image": "`+mockruntime.DefaultImage+`"}, "command": ["sleep", "600"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
