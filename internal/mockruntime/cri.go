package mockruntime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// runtimeService is the CRI RuntimeService of the mock.
type runtimeService struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	r *Runtime
}

// imageService is the CRI ImageService of the mock.
type imageService struct {
	runtimeapi.UnimplementedImageServiceServer
	r *Runtime
}

func invalidf(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, format, args...)
}

// resolveID finds id, or a unique prefix of one, among ids; what names the
// kind of object for the error.
func resolveID(id, what string, ids func(yield func(string) bool)) (string, error) {
	if id == "" {
		return "", invalidf("%s ID is empty", what)
	}
	var matches []string
	for cand := range ids {
		if cand == id {
			return cand, nil
		}
		if strings.HasPrefix(cand, id) {
			matches = append(matches, cand)
		}
	}
	switch len(matches) {
	case 0:
		return "", status.Errorf(codes.NotFound, "%s %q not found", what, id)
	case 1:
		return matches[0], nil
	}
	return "", status.Errorf(codes.InvalidArgument, "%s ID prefix %q is ambiguous: it matches %s", what, id, strings.Join(matches, ", "))
}

// findPod finds a pod by ID or unique ID prefix.
func (r *Runtime) findPod(id string) (*pod, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	full, err := resolveID(id, "pod sandbox", maps.Keys(r.pods))
	if err != nil {
		return nil, err
	}
	return r.pods[full], nil
}

// findContainer finds a container by ID or unique ID prefix.
func (r *Runtime) findContainer(id string) (*container, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	full, err := resolveID(id, "container", maps.Keys(r.containers))
	if err != nil {
		return nil, err
	}
	return r.containers[full], nil
}

// runningContainer finds a container that must be running (exec, attach).
func (r *Runtime) runningContainer(id string) (*container, error) {
	c, err := r.findContainer(id)
	if err != nil {
		return nil, err
	}
	if s := c.getState(); s != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return nil, status.Errorf(codes.FailedPrecondition, "container %s is %s, not running; start it first", c.id, stateName(s))
	}
	return c, nil
}

// jsonString renders v for the verbose Info maps, which crictl parses as
// JSON.
func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%q", err.Error())
	}
	return string(b)
}

// Version reports the mock's identity.
func (s *runtimeService) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	name := RuntimeName
	if s.r.cfg.Quirks.RuntimeName != "" {
		name = s.r.cfg.Quirks.RuntimeName
	}
	return &runtimeapi.VersionResponse{
		Version:           kubeletAPIVersion,
		RuntimeName:       name,
		RuntimeVersion:    RuntimeVersion,
		RuntimeApiVersion: RuntimeAPIVersion,
	}, nil
}

// Status reports the runtime and its network ready.
func (s *runtimeService) Status(_ context.Context, req *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	resp := &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		{Type: runtimeapi.RuntimeReady, Status: true},
		{Type: runtimeapi.NetworkReady, Status: true},
	}}}
	if req.GetVerbose() {
		addr := s.r.stream.Addr()
		resp.Info = map[string]string{
			"config": jsonString(map[string]any{"profile": s.r.cfg.Profile, "streamServerAddress": addr}),
		}
	}
	return resp, nil
}

// RuntimeConfig reports the cgroupfs driver (the mock makes no cgroups).
func (s *runtimeService) RuntimeConfig(context.Context, *runtimeapi.RuntimeConfigRequest) (*runtimeapi.RuntimeConfigResponse, error) {
	return &runtimeapi.RuntimeConfigResponse{Linux: &runtimeapi.LinuxRuntimeConfiguration{CgroupDriver: runtimeapi.CgroupDriver_CGROUPFS}}, nil
}

// UpdateRuntimeConfig accepts and ignores the pod CIDR: pods use loopback.
func (s *runtimeService) UpdateRuntimeConfig(context.Context, *runtimeapi.UpdateRuntimeConfigRequest) (*runtimeapi.UpdateRuntimeConfigResponse, error) {
	return &runtimeapi.UpdateRuntimeConfigResponse{}, nil
}

// UpdateContainerResources records new limits, which ContainerStatus then
// reports: the mock makes no cgroups, so nothing enforces them. An exited
// container cannot be updated.
func (s *runtimeService) UpdateContainerResources(_ context.Context, req *runtimeapi.UpdateContainerResourcesRequest) (*runtimeapi.UpdateContainerResourcesResponse, error) {
	c, err := s.r.findContainer(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == runtimeapi.ContainerState_CONTAINER_EXITED {
		return nil, status.Errorf(codes.FailedPrecondition, "container %s has exited; its resources cannot be updated", c.id)
	}
	if lr := req.GetLinux(); lr != nil {
		c.resources = lr
	}
	return &runtimeapi.UpdateContainerResourcesResponse{}, nil
}

// ReopenContainerLog reopens a running container's log file, after log
// rotation moved it away.
func (s *runtimeService) ReopenContainerLog(_ context.Context, req *runtimeapi.ReopenContainerLogRequest) (*runtimeapi.ReopenContainerLogResponse, error) {
	c, err := s.r.findContainer(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	if err := c.reopenLog(); err != nil {
		return nil, err
	}
	return &runtimeapi.ReopenContainerLogResponse{}, nil
}

// ExecSync runs cmd in the container and returns its output and exit code;
// a timeout (seconds) kills it and fails with DeadlineExceeded.
func (s *runtimeService) ExecSync(ctx context.Context, req *runtimeapi.ExecSyncRequest) (*runtimeapi.ExecSyncResponse, error) {
	c, err := s.r.runningContainer(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	if len(req.GetCmd()) == 0 {
		return nil, invalidf("exec needs a command")
	}
	if t := req.GetTimeout(); t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(t)*time.Second)
		defer cancel()
	}
	var stdout, stderr limitedBuffer
	code, err := s.r.runExec(ctx, c, req.GetCmd(), nil, &stdout, &stderr, false, nil)
	if err != nil {
		return nil, status.Errorf(codes.Unknown, "%v", err)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, status.Errorf(codes.DeadlineExceeded, "command %q in container %s timed out after %ds and was killed", req.GetCmd(), c.id, req.GetTimeout())
	}
	if stdout.over || stderr.over {
		return nil, status.Errorf(codes.ResourceExhausted, "command %q in container %s wrote more than %d bytes to stdout or stderr", req.GetCmd(), c.id, maxExecSyncOutput)
	}
	return &runtimeapi.ExecSyncResponse{Stdout: stdout.b, Stderr: stderr.b, ExitCode: int32(code)}, nil
}

// maxExecSyncOutput caps each ExecSync output, as containerd does: a gRPC
// message cannot hold more.
const maxExecSyncOutput = 16 << 20

// limitedBuffer keeps up to maxExecSyncOutput bytes and notes overflow.
type limitedBuffer struct {
	b    []byte
	over bool
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if len(l.b)+len(p) > maxExecSyncOutput {
		l.over = true
		return len(p), nil
	}
	l.b = append(l.b, p...)
	return len(p), nil
}

// validateStreams checks the stream flags of an Exec or Attach request.
func validateStreams(stdin, stdout, stderr, tty bool) error {
	if !stdin && !stdout && !stderr {
		return invalidf("one of stdin, stdout and stderr must be set")
	}
	if tty && stderr {
		return invalidf("tty and stderr cannot both be set: a terminal has one output")
	}
	return nil
}

// Exec hands out a streaming URL for an exec session.
func (s *runtimeService) Exec(_ context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	c, err := s.r.runningContainer(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	if len(req.GetCmd()) == 0 {
		return nil, invalidf("exec needs a command")
	}
	if err := validateStreams(req.GetStdin(), req.GetStdout(), req.GetStderr(), req.GetTty()); err != nil {
		return nil, err
	}
	r := cloneExec(req)
	r.ContainerId = c.id
	return s.r.stream.GetExec(r)
}

func cloneExec(req *runtimeapi.ExecRequest) *runtimeapi.ExecRequest {
	return &runtimeapi.ExecRequest{ContainerId: req.ContainerId, Cmd: req.Cmd, Tty: req.Tty, Stdin: req.Stdin, Stdout: req.Stdout, Stderr: req.Stderr}
}

// Attach hands out a streaming URL for attaching to the main process.
func (s *runtimeService) Attach(_ context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	c, err := s.r.runningContainer(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	if err := validateStreams(req.GetStdin(), req.GetStdout(), req.GetStderr(), req.GetTty()); err != nil {
		return nil, err
	}
	return s.r.stream.GetAttach(&runtimeapi.AttachRequest{ContainerId: c.id, Stdin: req.Stdin, Tty: req.Tty, Stdout: req.Stdout, Stderr: req.Stderr})
}

// PortForward hands out a streaming URL for forwarding to the pod.
func (s *runtimeService) PortForward(_ context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	p, err := s.r.findPod(req.GetPodSandboxId())
	if err != nil {
		return nil, err
	}
	if p.getState() != runtimeapi.PodSandboxState_SANDBOX_READY {
		return nil, status.Errorf(codes.FailedPrecondition, "pod sandbox %s is not ready; port-forward needs a running pod", p.id)
	}
	for _, port := range req.GetPort() {
		if port <= 0 || port > 65535 {
			return nil, invalidf("port %d is out of range 1-65535", port)
		}
	}
	return s.r.stream.GetPortForward(&runtimeapi.PortForwardRequest{PodSandboxId: p.id, Port: req.Port})
}
