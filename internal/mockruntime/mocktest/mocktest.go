// Package mocktest starts the mock runtime for tests and creates pods and
// containers in it through the CRI API, with everything torn down by
// t.Cleanup.
package mocktest

import (
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/mockruntime"
)

// Env is a running mock runtime and a CRI client connected to it.
type Env struct {
	Endpoint string
	Runtime  *mockruntime.Runtime
	CRI      runtimeapi.RuntimeServiceClient
	Images   runtimeapi.ImageServiceClient
}

// ContainerSpec describes a container to create and start.
type ContainerSpec struct {
	Name    string
	Image   string   // default: a busybox-like image that runs sh
	Command []string // overrides the image's command
	Args    []string
	TTY     bool
	Stdin   bool
	Env     map[string]string
}

// Start starts a mock runtime on a short temporary socket. cfg.Listen may be
// empty. Everything is torn down by t.Cleanup.
func Start(t testing.TB, cfg mockruntime.Config) *Env {
	t.Fatal("mocktest: not built yet")
	return nil
}

// RunPod creates a pod sandbox and returns its ID.
func (e *Env) RunPod(t testing.TB, name string) string {
	t.Fatal("mocktest: not built yet")
	return ""
}

// RunContainer creates and starts a container in podID and returns its ID.
func (e *Env) RunContainer(t testing.TB, podID string, spec ContainerSpec) string {
	t.Fatal("mocktest: not built yet")
	return ""
}
