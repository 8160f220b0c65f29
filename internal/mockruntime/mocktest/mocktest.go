// Package mocktest starts the mock runtime for tests and creates pods and
// containers in it through the CRI API, with everything torn down by
// t.Cleanup. The error-returning variants (StartRuntime, CreatePod,
// CreateContainer, Close) serve harnesses outside package testing.
package mocktest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/mockruntime"
)

// Env is a running mock runtime and a CRI client connected to it.
type Env struct {
	Endpoint string
	Runtime  *mockruntime.Runtime
	CRI      runtimeapi.RuntimeServiceClient
	Images   runtimeapi.ImageServiceClient
	// Dir is the environment's temporary folder (socket, pod logs); Close
	// removes it.
	Dir string

	conn *grpc.ClientConn

	mu   sync.Mutex
	pods map[string]*runtimeapi.PodSandboxConfig
	seq  int
}

// ContainerSpec describes a container to create and start.
type ContainerSpec struct {
	Name    string   // default: c1, c2, ...
	Image   string   // default: a busybox-like image that runs sh
	Command []string // overrides the image's command
	Args    []string
	TTY     bool
	Stdin   bool
	// StdinOnce closes the container's stdin when the first attached
	// client ends its input.
	StdinOnce  bool
	Env        map[string]string
	Labels     map[string]string
	WorkingDir string
}

// testStreamCreationTimeout is the mock's stream creation timeout in tests
// (as the streaming server's and probe's own tests use).
const testStreamCreationTimeout = 5 * time.Second

// callTimeout bounds each CRI call a helper makes.
const callTimeout = 30 * time.Second

// StartRuntime starts a mock runtime on a short temporary socket (unix
// socket paths are limited to 108 bytes, so not under t.TempDir) and
// connects a CRI client. cfg.Listen may be empty. The caller must Close.
func StartRuntime(ctx context.Context, cfg mockruntime.Config) (*Env, error) {
	dir, err := os.MkdirTemp("", "crisp")
	if err != nil {
		return nil, fmt.Errorf("mocktest: create a temporary folder: %w", err)
	}
	if cfg.Listen == "" {
		cfg.Listen = "unix://" + filepath.Join(dir, "cri.sock")
	}
	if cfg.StreamCreationTimeout == 0 {
		// A client killed mid-handshake (the signal and fault tests) left
		// Close waiting the library's 30 s: half a minute per such test.
		cfg.StreamCreationTimeout = testStreamCreationTimeout
	}
	rt, err := mockruntime.Start(ctx, cfg)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("mocktest: %w", err)
	}
	conn, err := grpc.NewClient(rt.Endpoint(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		_ = rt.Close()
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("mocktest: connect to %s: %w", rt.Endpoint(), err)
	}
	return &Env{
		Endpoint: rt.Endpoint(),
		Runtime:  rt,
		CRI:      runtimeapi.NewRuntimeServiceClient(conn),
		Images:   runtimeapi.NewImageServiceClient(conn),
		Dir:      dir,
		conn:     conn,
		pods:     map[string]*runtimeapi.PodSandboxConfig{},
	}, nil
}

// Close disconnects the client, closes the runtime (ending every process)
// and removes the temporary folder.
func (e *Env) Close() error {
	errs := []error{e.conn.Close(), e.Runtime.Close(), os.RemoveAll(e.Dir)}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("mocktest: close: %w", err)
	}
	return nil
}

// CreatePod runs a pod sandbox named name (logs under the environment's
// folder) and returns its ID.
func (e *Env) CreatePod(ctx context.Context, name string) (string, error) {
	e.mu.Lock()
	e.seq++
	uid := fmt.Sprintf("uid-%d-%s", e.seq, name)
	e.mu.Unlock()
	cfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Uid: uid, Namespace: "default"},
		Hostname:     name,
		LogDirectory: filepath.Join(e.Dir, "pods", uid),
		Labels:       map[string]string{"crisp.test/pod": name},
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := e.CRI.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		return "", fmt.Errorf("mocktest: run pod %q: %w", name, err)
	}
	e.mu.Lock()
	e.pods[resp.PodSandboxId] = cfg
	e.mu.Unlock()
	return resp.PodSandboxId, nil
}

// CreateContainer creates AND starts a container in podID (a pod made by
// CreatePod or RunPod), pulling its image first when the runtime lacks it,
// and returns its ID.
func (e *Env) CreateContainer(ctx context.Context, podID string, spec ContainerSpec) (string, error) {
	e.mu.Lock()
	podCfg := e.pods[podID]
	e.mu.Unlock()
	if podCfg == nil {
		return "", fmt.Errorf("mocktest: pod %q was not created by this environment; use CreatePod", podID)
	}
	if spec.Image == "" {
		spec.Image = mockruntime.DefaultImage
	}
	if spec.Name == "" {
		// Names are unique in a pod: number the unnamed ones.
		e.mu.Lock()
		e.seq++
		spec.Name = fmt.Sprintf("c%d", e.seq)
		e.mu.Unlock()
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	st, err := e.Images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: spec.Image}})
	if err != nil {
		return "", fmt.Errorf("mocktest: image status of %q: %w", spec.Image, err)
	}
	if st.GetImage() == nil {
		if _, err := e.Images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: spec.Image}}); err != nil {
			return "", fmt.Errorf("mocktest: pull %q: %w", spec.Image, err)
		}
	}
	cfg := &runtimeapi.ContainerConfig{
		Metadata:   &runtimeapi.ContainerMetadata{Name: spec.Name},
		Image:      &runtimeapi.ImageSpec{Image: spec.Image, UserSpecifiedImage: spec.Image}, // as the kubelet sets it
		Command:    spec.Command,
		Args:       spec.Args,
		WorkingDir: spec.WorkingDir,
		Labels:     spec.Labels,
		Tty:        spec.TTY,
		Stdin:      spec.Stdin,
		StdinOnce:  spec.StdinOnce,
		LogPath:    spec.Name + ".log",
	}
	for k, v := range spec.Env {
		cfg.Envs = append(cfg.Envs, &runtimeapi.KeyValue{Key: k, Value: []byte(v)})
	}
	resp, err := e.CRI.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: podID, Config: cfg, SandboxConfig: podCfg})
	if err != nil {
		return "", fmt.Errorf("mocktest: create container %q in pod %s: %w", spec.Name, podID, err)
	}
	if _, err := e.CRI.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: resp.ContainerId}); err != nil {
		return "", fmt.Errorf("mocktest: start container %q (%s): %w", spec.Name, resp.ContainerId, err)
	}
	return resp.ContainerId, nil
}

// Start starts a mock runtime on a short temporary socket. cfg.Listen may be
// empty. Everything is torn down by t.Cleanup.
func Start(t testing.TB, cfg mockruntime.Config) *Env {
	t.Helper()
	if cfg.Logf == nil {
		cfg.Logf = t.Logf
	}
	e, err := StartRuntime(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	})
	return e
}

// RunPod creates a pod sandbox and returns its ID.
func (e *Env) RunPod(t testing.TB, name string) string {
	t.Helper()
	id, err := e.CreatePod(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// RunContainer creates and starts a container in podID and returns its ID.
func (e *Env) RunContainer(t testing.TB, podID string, spec ContainerSpec) string {
	t.Helper()
	id, err := e.CreateContainer(context.Background(), podID, spec)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
