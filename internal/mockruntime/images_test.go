package mockruntime_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/crisp-cri/crisp/internal/mockruntime"
	"github.com/crisp-cri/crisp/internal/mockruntime/mocktest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestImages(t *testing.T) {
	env := start(t)
	ctx := ctxT(t)
	st, err := env.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: mockruntime.DefaultImage}})
	if err != nil || st.Image == nil {
		t.Fatalf("default image status: %v, %v", st, err)
	}
	st, err = env.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: "nginx"}})
	if err != nil || st.Image != nil {
		t.Fatalf("status of an image never pulled = %v, %v; want no image, no error", st, err)
	}
	pull, err := env.Images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "nginx"}})
	if err != nil {
		t.Fatal(err)
	}
	st, err = env.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: "docker.io/library/nginx:latest"}})
	if err != nil || st.Image == nil || st.Image.Id != pull.ImageRef {
		t.Fatalf("status after pull = %v, %v; want image %s", st, err, pull.ImageRef)
	}
	list, err := env.Images.ListImages(ctx, &runtimeapi.ListImagesRequest{})
	if err != nil || len(list.Images) != 2 {
		t.Fatalf("ListImages = %v, %v; want the default image and nginx", list, err)
	}
	if _, err := env.Images.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: pull.ImageRef}}); err != nil {
		t.Fatal(err)
	}
	fs, err := env.Images.ImageFsInfo(ctx, &runtimeapi.ImageFsInfoRequest{})
	if err != nil || len(fs.ImageFilesystems) != 1 {
		t.Fatalf("ImageFsInfo = %v, %v", fs, err)
	}
}

func TestWebServerImage(t *testing.T) {
	env := start(t)
	ctx := ctxT(t)
	podID := env.RunPod(t, "web")
	// Port 80 may be taken on a developer machine; the host-network image
	// uses 12003.
	id := env.RunContainer(t, podID, mocktest.ContainerSpec{Image: "gcr.io/k8s-staging-cri-tools/hostnet-nginx-amd64"})
	waitState(t, env, id, runtimeapi.ContainerState_CONTAINER_RUNNING)
	// Other mocks (parallel test packages, critest) may serve the same port
	// through SO_REUSEPORT: the header says whose server answered, and the
	// kernel spreads new connections over the listeners, so ask a few times.
	servedBy := func() map[string]bool {
		seen := map[string]bool{}
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		for range 20 {
			resp, err := client.Get("http://127.0.0.1:12003/")
			if err != nil {
				continue
			}
			_ = resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("GET / = %d, want 200", resp.StatusCode)
			}
			seen[resp.Header.Get(mockruntime.WebContainerHeader)] = true
		}
		return seen
	}
	deadline := time.Now().Add(10 * time.Second)
	for !servedBy()[id] {
		if time.Now().After(deadline) {
			t.Fatalf("container %s's web server never answered on 127.0.0.1:12003", id)
		}
	}
	if _, err := env.CRI.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 5}); err != nil {
		t.Fatal(err)
	}
	waitState(t, env, id, runtimeapi.ContainerState_CONTAINER_EXITED)
	if servedBy()[id] {
		t.Error("the web server still answers after its container stopped")
	}
}

// TestImageCatalog checks what critest's image specs rely on: tags of one
// content are one image, removal takes every name, image users, and the
// credentials the private catalog image asks for.
func TestImageCatalog(t *testing.T) {
	env := start(t)
	ctx := ctxT(t)
	pull := func(ref string, auth *runtimeapi.AuthConfig) (string, error) {
		resp, err := env.Images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: ref}, Auth: auth})
		return resp.GetImageRef(), err
	}
	a, errA := pull("registry.k8s.io/pause:3.9", nil)
	b, errB := pull("k8s.gcr.io/pause:3.9", nil)
	if errA != nil || errB != nil || a != b {
		t.Fatalf("pause from two registries: %s (%v), %s (%v); want one image", a, errA, b, errB)
	}
	st, err := env.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: a}, Verbose: true})
	if err != nil || len(st.GetImage().GetRepoTags()) != 2 || st.GetInfo()["info"] == "" {
		t.Fatalf("status of the shared image = %v, %v; want two tags and verbose info", st, err)
	}
	if _, err := env.Images.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: "k8s.gcr.io/pause:3.9"}}); err != nil {
		t.Fatal(err)
	}
	if st, _ := env.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: "registry.k8s.io/pause:3.9"}}); st.GetImage() != nil {
		t.Errorf("removing one tag left the other: %v", st.GetImage())
	}

	if _, err := pull("gcr.io/k8s-staging-cri-tools/test-image-user-uid", nil); err != nil {
		t.Fatal(err)
	}
	st, _ = env.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: "gcr.io/k8s-staging-cri-tools/test-image-user-uid"}})
	if st.GetImage().GetUid().GetValue() != 1002 {
		t.Errorf("uid image: uid %v, want 1002", st.GetImage().GetUid())
	}

	if _, err := pull(mockruntime.PrivateImage, nil); status.Code(err) != codes.Unknown || !strings.Contains(err.Error(), "401 Unauthorized") {
		t.Errorf("pull of the private image without credentials: %v, want a 401 refusal", err)
	}
	if _, err := pull(mockruntime.PrivateImage, &runtimeapi.AuthConfig{Username: mockruntime.PrivateImageUser, Password: "wrong"}); err == nil {
		t.Errorf("pull of the private image with a wrong password succeeded")
	}
	if _, err := pull(mockruntime.PrivateImage, &runtimeapi.AuthConfig{Username: mockruntime.PrivateImageUser, Password: mockruntime.PrivateImagePassword}); err != nil {
		t.Errorf("pull with --creds: %v", err)
	}
	auth := base64.StdEncoding.EncodeToString([]byte(mockruntime.PrivateImageUser + ":" + mockruntime.PrivateImagePassword))
	if _, err := pull(mockruntime.PrivateImage, &runtimeapi.AuthConfig{Auth: auth}); err != nil {
		t.Errorf("pull with --auth: %v", err)
	}

	tctx, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	if _, err := env.Images.PullImage(tctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "busybox:timeout"}}); status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("pull with a 1ms deadline: %v, want DeadlineExceeded", err)
	}
}

// TestWebServerPortTaken: a web-server container of a pod with its own
// network starts although another program holds 127.0.0.1:80 (or the mock
// may not bind it), and the pod's port 80 still answers through
// port-forward and through a host-port mapping: a host's web server or a
// parallel test run must not break the mock's pods.
func TestWebServerPortTaken(t *testing.T) {
	// Hold the port without SO_REUSEPORT, as a host's web server would; where
	// it cannot be held (no root, or held already) the mock meets the same.
	if lis, err := net.Listen("tcp", "127.0.0.1:80"); err == nil {
		t.Cleanup(func() { _ = lis.Close() })
	}
	env := start(t)
	ctx := ctxT(t)
	hostPort := freePort(t)
	podCfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: "web", Namespace: "default", Uid: "web-uid"},
		PortMappings: []*runtimeapi.PortMapping{{Protocol: runtimeapi.Protocol_TCP, ContainerPort: 80, HostPort: int32(hostPort)}},
	}
	resp, err := env.CRI.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: podCfg})
	if err != nil {
		t.Fatal(err)
	}
	podID := resp.PodSandboxId
	image := &runtimeapi.ImageSpec{Image: "registry.k8s.io/e2e-test-images/nginx:1.14-2"}
	if _, err := env.Images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: image}); err != nil {
		t.Fatal(err)
	}
	created, err := env.CRI.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: podID, SandboxConfig: podCfg,
		Config: &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "nginx"}, Image: image}})
	if err != nil {
		t.Fatal(err)
	}
	id := created.ContainerId
	if _, err := env.CRI.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: id}); err != nil {
		t.Fatalf("start the web server while 127.0.0.1:80 is taken: %v", err)
	}
	waitState(t, env, id, runtimeapi.ContainerState_CONTAINER_RUNNING)

	pf, err := env.CRI.PortForward(ctx, &runtimeapi.PortForwardRequest{PodSandboxId: podID, Port: []int32{80}})
	if err != nil {
		t.Fatal(err)
	}
	local, stop := spdyForward(t, pf.Url, 80)
	defer stop()
	for name, addr := range map[string]string{
		"port-forward":      fmt.Sprintf("127.0.0.1:%d", local),
		"host-port mapping": fmt.Sprintf("127.0.0.1:%d", hostPort),
	} {
		// Other mocks may share port 80 through SO_REUSEPORT when nothing
		// else holds it: ask until this container's server answers.
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		answered := false
		for range 20 {
			r, err := client.Get("http://" + addr + "/")
			if err != nil {
				t.Fatalf("%s: GET http://%s/: %v", name, addr, err)
			}
			_ = r.Body.Close()
			if r.StatusCode == 200 && r.Header.Get(mockruntime.WebContainerHeader) == id {
				answered = true
				break
			}
		}
		if !answered {
			t.Errorf("%s: container %s's web server never answered on the pod's port 80", name, id)
		}
	}
}

// freePort is a loopback port nothing listens on (a moment ago).
func freePort(t *testing.T) int {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lis.Close() }()
	return lis.Addr().(*net.TCPAddr).Port
}
