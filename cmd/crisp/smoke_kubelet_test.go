package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/probe"
	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
	"github.com/crisp-cri/crisp/internal/mockruntime/streamserver"
	"github.com/crisp-cri/crisp/internal/testsupport/testkit"
)

// kubeletPod creates a pod the way a kubelet does: with its
// io.kubernetes.pod.* labels.
func kubeletPod(t *testing.T, env *mocktest.Env, namespace, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	uid := namespace + "-" + name + "-uid"
	resp, err := env.CRI.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: namespace, Uid: uid},
		Labels: map[string]string{
			client.KubeletPodUIDLabel: uid, client.KubeletPodNameLabel: name, client.KubeletPodNamespaceLabel: namespace,
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return resp.PodSandboxId
}

func TestSmokeImageRefusedOnKubeletRuntime(t *testing.T) {
	skipInShort(t)
	env := mocktest.Start(t, mockruntime.Config{Profile: streamserver.ProfileCRIStreaming})
	kubeletPod(t, env, "kube-system", "kube-proxy-x1")
	for _, output := range []string{"table", "json"} {
		t.Run(output, func(t *testing.T) {
			start := time.Now()
			stdout, stderr, code := crispRun(t, env.Endpoint, "smoke", "--image", "busybox", "--port", "7777", "-o", output)
			if code != 1 {
				t.Fatalf("smoke --image on a kubelet's runtime exited %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			for _, want := range []string{"a kubelet manages the runtime", "kube-system/kube-proxy-x1", "--pod POD", "crisp fleet", "--kubelet-stopped"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("the refusal does not say %q:\n%s", want, stderr)
				}
			}
			if strings.Contains(stderr, "created pod") {
				t.Errorf("smoke created a pod before refusing:\n%s", stderr)
			}
			if output == "json" {
				var rep probe.SmokeReport
				if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
					t.Fatalf("-o json printed no report: %v\n%s", err, stdout)
				}
				if !strings.Contains(rep.Error, "a kubelet manages the runtime") || rep.OK() {
					t.Errorf("the JSON report does not carry the refusal: error %q", rep.Error)
				}
			} else if strings.Contains(stdout, "passed") {
				t.Errorf("a refused run printed a tally:\n%s", stdout)
			}
			t.Logf("refused in %v", time.Since(start))
		})
	}
	pods, ctrs := leftovers(t, env)
	if len(pods) != 1 || len(ctrs) != 0 {
		t.Errorf("after the refusals the runtime has pods %q and containers %q, want the kubelet's pod only", pods, ctrs)
	}
}

func TestSmokeImageKubeletStoppedCreatesPod(t *testing.T) {
	skipInShort(t)
	env := mocktest.Start(t, mockruntime.Config{Profile: streamserver.ProfileCRIStreaming})
	kubeletPod(t, env, "kube-system", "kube-proxy-x1")
	stdout, stderr, code := crispRun(t, env.Endpoint, "smoke", "--image", "busybox", "--kubelet-stopped")
	if code != 0 {
		t.Fatalf("smoke --image --kubelet-stopped exited %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if _, stderr, code := crispRun(t, env.Endpoint, "smoke", "ticker", "--kubelet-stopped"); code != 2 || !strings.Contains(stderr, "--kubelet-stopped goes with --image") {
		t.Errorf("--kubelet-stopped without --image: exit %d, want 2 and a usage error\n%s", code, stderr)
	}
}

// A kubelet removes the scratch pod under smoke (here the mock does, on a
// runtime that shows no kubelet pods yet): the run ends saying so, instead
// of failing check after check as if the protocols were broken.
func TestSmokeImageScratchPodRemovedByOthers(t *testing.T) {
	skipInShort(t)
	env := mocktest.Start(t, mockruntime.Config{Profile: streamserver.ProfileCRIStreaming, RemoveOrphanPodsAfter: 1500 * time.Millisecond})
	port := testkit.Echo(t)
	stdout, stderr, code := crispRun(t, env.Endpoint, "smoke", "--image", "busybox", "--port", fmt.Sprint(port), "-o", "json")
	if code != 1 {
		t.Fatalf("smoke whose scratch pod was removed exited %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	var rep probe.SmokeReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("-o json printed no report: %v\n%s", err, stdout)
	}
	for _, want := range []string{"scratch pod", "not by smoke", "say nothing about the runtime's streaming", "kubelet"} {
		if !strings.Contains(rep.Error, want) {
			t.Errorf("the report's error does not say %q: %q", want, rep.Error)
		}
	}
	if rep.Failed > 1 {
		t.Errorf("%d checks failed after the pod was gone; the run should stop at the first (report error %q)", rep.Failed, rep.Error)
	}
}

// A kubelet can remove the scratch pod before its container starts (seen on
// a real node: StartContainer failed with "cannot start a container that
// has stopped"): the run says the pod was taken away, not that the runtime
// failed to start a container.
func TestSmokeImageScratchPodRemovedBeforeStart(t *testing.T) {
	skipInShort(t)
	env := mocktest.Start(t, mockruntime.Config{Profile: streamserver.ProfileCRIStreaming, RemoveOrphanPodsAfter: time.Nanosecond})
	for _, output := range []string{"table", "json"} {
		t.Run(output, func(t *testing.T) {
			stdout, stderr, code := crispRun(t, env.Endpoint, "smoke", "--image", "busybox", "-o", output)
			if code != 1 {
				t.Fatalf("smoke whose scratch pod was removed at once exited %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			for _, want := range []string{"scratch pod", "lost its pod before its container ran", "not by smoke", "kubelet"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr does not say %q:\n%s", want, stderr)
				}
			}
			if output == "json" {
				var rep probe.SmokeReport
				if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
					t.Fatalf("-o json printed no report: %v\n%s", err, stdout)
				}
				if !strings.Contains(rep.Error, "not by smoke") || rep.OK() {
					t.Errorf("the JSON report does not carry why: error %q", rep.Error)
				}
			}
		})
	}
	if pods, ctrs := leftovers(t, env); len(pods) != 0 || len(ctrs) != 0 {
		t.Errorf("smoke left pods %q and containers %q", pods, ctrs)
	}
}

// --pod narrows the container's name to that pod: a DaemonSet's sidecar
// and a Job's share a name on one node.
func TestProbePodScopesContainerName(t *testing.T) {
	skipInShort(t)
	env := mocktest.Start(t, mockruntime.Config{Profile: streamserver.ProfileCRIStreaming})
	ticker := mocktest.ContainerSpec{Name: "target", Command: []string{"sh", "-c", "while :; do echo tick; sleep 0.2; done"}}
	env.RunContainer(t, env.RunPod(t, "ds-pod"), ticker)
	want := env.RunContainer(t, env.RunPod(t, "job-pod"), ticker)
	stdout, stderr, code := crispRun(t, env.Endpoint, "probe", "target", "--pod", "job-pod", "-o", "json")
	if code != 0 {
		t.Fatalf("probe target --pod job-pod exited %d\n%s", code, stderr)
	}
	var rep probe.ProbeReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Container != want {
		t.Errorf("probe ran on container %s, want %s (the one in --pod job-pod)", rep.Container, want)
	}
}

// runp on a kubelet's runtime creates the pod (the user asked for it) but
// warns that the kubelet will remove it.
func TestRunpWarnsOnKubeletRuntime(t *testing.T) {
	skipInShort(t)
	env := mocktest.Start(t, mockruntime.Config{Profile: streamserver.ProfileCRIStreaming})
	cfg := filepath.Join(t.TempDir(), "pod.json")
	if err := os.WriteFile(cfg, []byte(`{"metadata": {"name": "mine", "namespace": "default", "uid": "mine-1"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := crispRun(t, env.Endpoint, "runp", cfg); code != 0 || strings.Contains(stderr, "kubelet") {
		t.Fatalf("runp without a kubelet: exit %d, stderr %q; want 0 and no warning", code, stderr)
	}
	kubeletPod(t, env, "kube-system", "kube-proxy-x1")
	cfg2 := filepath.Join(t.TempDir(), "pod.json")
	if err := os.WriteFile(cfg2, []byte(`{"metadata": {"name": "mine2", "namespace": "default", "uid": "mine-2"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := crispRun(t, env.Endpoint, "runp", cfg2)
	if code != 0 || !strings.Contains(stderr, "warning: a kubelet manages this runtime") || !strings.Contains(stderr, "kube-system/kube-proxy-x1") {
		t.Errorf("runp on a kubelet's runtime: exit %d, stderr %q; want 0 and a warning naming a kubelet pod", code, stderr)
	}
}
