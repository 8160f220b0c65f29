package mockruntime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
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
	return &runtimeapi.VersionResponse{
		Version:           kubeletAPIVersion,
		RuntimeName:       RuntimeName,
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

// RunPodSandbox records a ready pod.
func (s *runtimeService) RunPodSandbox(_ context.Context, req *runtimeapi.RunPodSandboxRequest) (*runtimeapi.RunPodSandboxResponse, error) {
	cfg := req.GetConfig()
	md := cfg.GetMetadata()
	if md.GetName() == "" {
		return nil, invalidf("pod sandbox config needs metadata.name")
	}
	p := &pod{
		id:             newID(),
		config:         cfg,
		runtimeHandler: req.GetRuntimeHandler(),
		createdAt:      time.Now().UnixNano(),
		state:          runtimeapi.PodSandboxState_SANDBOX_READY,
	}
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	if s.r.closing {
		return nil, status.Error(codes.Unavailable, "the mock runtime is shutting down")
	}
	for _, other := range s.r.pods {
		om := other.config.GetMetadata()
		if om.GetName() == md.GetName() && om.GetNamespace() == md.GetNamespace() && om.GetUid() == md.GetUid() && om.GetAttempt() == md.GetAttempt() {
			return nil, status.Errorf(codes.AlreadyExists, "pod sandbox %s (name %q, namespace %q, uid %q, attempt %d) already exists; remove it or change the attempt", other.id, md.GetName(), md.GetNamespace(), md.GetUid(), md.GetAttempt())
		}
	}
	s.r.pods[p.id] = p
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: p.id}, nil
}

// containersOf lists the containers of pod id.
func (r *Runtime) containersOf(podID string) []*container {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*container
	for _, c := range r.containers {
		if c.podID == podID {
			out = append(out, c)
		}
	}
	return out
}

// StopPodSandbox kills the pod's containers and marks it not ready.
func (s *runtimeService) StopPodSandbox(_ context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	p, err := s.r.findPod(req.GetPodSandboxId())
	if err != nil {
		return nil, err
	}
	for _, c := range s.r.containersOf(p.id) {
		c.stop(0)
	}
	p.mu.Lock()
	p.state = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	p.mu.Unlock()
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

// RemovePodSandbox kills and removes the pod's containers, then the pod.
func (s *runtimeService) RemovePodSandbox(_ context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	p, err := s.r.findPod(req.GetPodSandboxId())
	if err != nil {
		return nil, err
	}
	for _, c := range s.r.containersOf(p.id) {
		c.stop(0)
		s.r.mu.Lock()
		delete(s.r.containers, c.id)
		s.r.mu.Unlock()
	}
	s.r.mu.Lock()
	delete(s.r.pods, p.id)
	s.r.mu.Unlock()
	return &runtimeapi.RemovePodSandboxResponse{}, nil
}

func (p *pod) sandbox() *runtimeapi.PodSandbox {
	return &runtimeapi.PodSandbox{
		Id:             p.id,
		Metadata:       p.config.GetMetadata(),
		State:          p.getState(),
		CreatedAt:      p.createdAt,
		Labels:         maps.Clone(p.config.GetLabels()),
		Annotations:    maps.Clone(p.config.GetAnnotations()),
		RuntimeHandler: p.runtimeHandler,
	}
}

// PodSandboxStatus reports the pod, with 127.0.0.1 as its IP: pods share
// the host loopback.
func (s *runtimeService) PodSandboxStatus(_ context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	p, err := s.r.findPod(req.GetPodSandboxId())
	if err != nil {
		return nil, err
	}
	sb := p.sandbox()
	nsOpts := p.config.GetLinux().GetSecurityContext().GetNamespaceOptions()
	if nsOpts == nil {
		nsOpts = &runtimeapi.NamespaceOption{}
	}
	resp := &runtimeapi.PodSandboxStatusResponse{Status: &runtimeapi.PodSandboxStatus{
		Id:             sb.Id,
		Metadata:       sb.Metadata,
		State:          sb.State,
		CreatedAt:      sb.CreatedAt,
		Network:        &runtimeapi.PodSandboxNetworkStatus{Ip: "127.0.0.1"},
		Linux:          &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{Options: nsOpts}},
		Labels:         sb.Labels,
		Annotations:    sb.Annotations,
		RuntimeHandler: sb.RuntimeHandler,
	}}
	if req.GetVerbose() {
		resp.Info = map[string]string{"info": jsonString(map[string]any{"runtime": RuntimeName, "network": "host loopback", "runtimeHandler": p.runtimeHandler})}
	}
	return resp, nil
}

// labelsMatch reports whether every selector label is in labels.
func labelsMatch(selector, labels map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// ListPodSandbox lists pods, filtered by ID (or prefix), state and labels.
func (s *runtimeService) ListPodSandbox(_ context.Context, req *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	f := req.GetFilter()
	s.r.mu.Lock()
	pods := slices.Collect(maps.Values(s.r.pods))
	s.r.mu.Unlock()
	var out []*runtimeapi.PodSandbox
	for _, p := range pods {
		sb := p.sandbox()
		if f.GetId() != "" && !strings.HasPrefix(sb.Id, f.GetId()) {
			continue
		}
		if f.GetState() != nil && f.GetState().GetState() != sb.State {
			continue
		}
		if !labelsMatch(f.GetLabelSelector(), sb.Labels) {
			continue
		}
		out = append(out, sb)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt > out[j].CreatedAt })
	return &runtimeapi.ListPodSandboxResponse{Items: out}, nil
}

// envValue is the value of key in env (KEY=VALUE entries); the last wins.
func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// CreateContainer checks the config against the image catalog and the host
// and records a created container.
func (s *runtimeService) CreateContainer(_ context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	p, err := s.r.findPod(req.GetPodSandboxId())
	if err != nil {
		return nil, err
	}
	if p.getState() != runtimeapi.PodSandboxState_SANDBOX_READY {
		return nil, status.Errorf(codes.FailedPrecondition, "pod sandbox %s is not ready; create containers in a running pod", p.id)
	}
	cfg := req.GetConfig()
	if cfg.GetMetadata().GetName() == "" {
		return nil, invalidf("container config needs metadata.name")
	}
	ref := cfg.GetImage().GetImage()
	if ref == "" {
		return nil, invalidf("container config needs image.image")
	}
	img := s.r.images.find(ref)
	if img == nil {
		return nil, status.Errorf(codes.NotFound, "image %q not found; pull it first (crictl pull %s)", ref, ref)
	}
	name := img.Spec.GetImage()
	kind, port := classifyImage(name)
	c := &container{
		r:         s.r,
		id:        newID(),
		podID:     p.id,
		config:    cfg,
		image:     img,
		imageName: name,
		kind:      kind,
		webPort:   port,
		createdAt: time.Now().UnixNano(),
		state:     runtimeapi.ContainerState_CONTAINER_CREATED,
	}
	if cfg.GetLogPath() != "" {
		c.logPath = filepath.Join(p.config.GetLogDirectory(), cfg.GetLogPath())
		if !filepath.IsAbs(c.logPath) {
			return nil, invalidf("log path %q (pod log_directory %q + container log_path %q) is not absolute", c.logPath, p.config.GetLogDirectory(), cfg.GetLogPath())
		}
	}
	if err := s.r.buildSpec(c, p); err != nil {
		return nil, err
	}
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	if s.r.closing {
		return nil, status.Error(codes.Unavailable, "the mock runtime is shutting down")
	}
	if _, ok := s.r.pods[p.id]; !ok {
		return nil, status.Errorf(codes.NotFound, "pod sandbox %s was removed", p.id)
	}
	for _, other := range s.r.containers {
		if other.podID == p.id && other.config.GetMetadata().GetName() == cfg.GetMetadata().GetName() &&
			other.config.GetMetadata().GetAttempt() == cfg.GetMetadata().GetAttempt() {
			return nil, status.Errorf(codes.AlreadyExists, "container %q (attempt %d) already exists in pod %s as %s; remove it or change the attempt",
				cfg.GetMetadata().GetName(), cfg.GetMetadata().GetAttempt(), p.id, other.id)
		}
	}
	s.r.containers[c.id] = c
	return &runtimeapi.CreateContainerResponse{ContainerId: c.id}, nil
}

// buildSpec works out the process of c: argv (the image's default command
// when the config has none), environment and working directory.
func (r *Runtime) buildSpec(c *container, p *pod) error {
	cfg := c.config
	argv := append(slices.Clone(cfg.GetCommand()), cfg.GetArgs()...)
	if len(argv) == 0 {
		switch c.kind {
		case imageBusybox:
			argv = []string{"sh"}
		case imageWebServer:
			// The built-in web server runs; there is no host process.
		default:
			return invalidf("image %q has no default command in the mock runtime (only busybox-like and nginx/httpd images do); give the container a command", c.imageName)
		}
	}
	hostname := p.config.GetHostname()
	if hostname == "" {
		hostname = p.config.GetMetadata().GetName()
	}
	env := []string{"PATH=" + r.procEnv.pathFor(c.kind), "HOSTNAME=" + hostname, "HOME=/root"}
	if cfg.GetTty() {
		env = append(env, "TERM=xterm")
	}
	for _, kv := range cfg.GetEnvs() {
		if kv.GetKey() == "" {
			return invalidf("container env has an empty key")
		}
		env = append(env, kv.GetKey()+"="+string(kv.GetValue()))
	}
	dir := cfg.GetWorkingDir()
	if dir == "" {
		dir = "/"
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return invalidf("working dir %q does not exist on the host (the mock runs containers as host processes); use an existing folder", dir)
	}
	c.spec = procSpec{env: env, dir: dir, tty: cfg.GetTty(), stdin: cfg.GetStdin()}
	if len(argv) > 0 {
		path, err := r.procEnv.resolve(c.kind, argv[0], envValue(env, "PATH"))
		if err != nil {
			return invalidf("container command: %v", err)
		}
		c.spec.argv = append([]string{path}, argv[1:]...)
	}
	return nil
}

// StartContainer starts the container's process (or web server).
func (s *runtimeService) StartContainer(_ context.Context, req *runtimeapi.StartContainerRequest) (*runtimeapi.StartContainerResponse, error) {
	c, err := s.r.findContainer(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	if p, err := s.r.findPod(c.podID); err != nil || p.getState() != runtimeapi.PodSandboxState_SANDBOX_READY {
		return nil, status.Errorf(codes.FailedPrecondition, "pod sandbox %s of container %s is not ready", c.podID, c.id)
	}
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	if s.r.closing {
		return nil, status.Error(codes.Unavailable, "the mock runtime is shutting down")
	}
	if st := c.getState(); st != runtimeapi.ContainerState_CONTAINER_CREATED {
		return nil, status.Errorf(codes.FailedPrecondition, "container %s is %s; only a created container can be started", c.id, stateName(st))
	}
	if err := c.start(); err != nil {
		return nil, status.Errorf(codes.Unknown, "start container %s: %v", c.id, err)
	}
	return &runtimeapi.StartContainerResponse{}, nil
}

// StopContainer stops the container (SIGTERM, SIGKILL after the timeout).
func (s *runtimeService) StopContainer(ctx context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	c, err := s.r.findContainer(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	c.stop(req.GetTimeout())
	return &runtimeapi.StopContainerResponse{}, nil
}

// RemoveContainer removes the container, killing it first if it runs.
func (s *runtimeService) RemoveContainer(_ context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	c, err := s.r.findContainer(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	c.stop(0)
	s.r.mu.Lock()
	delete(s.r.containers, c.id)
	s.r.mu.Unlock()
	return &runtimeapi.RemoveContainerResponse{}, nil
}

func (c *container) summary() *runtimeapi.Container {
	st := c.status()
	return &runtimeapi.Container{
		Id:           st.Id,
		PodSandboxId: c.podID,
		Metadata:     st.Metadata,
		Image:        st.Image,
		ImageRef:     st.ImageRef,
		ImageId:      st.ImageId,
		State:        st.State,
		CreatedAt:    st.CreatedAt,
		Labels:       st.Labels,
		Annotations:  st.Annotations,
	}
}

// ListContainers lists containers, filtered by ID (or prefix), pod, state
// and labels.
func (s *runtimeService) ListContainers(_ context.Context, req *runtimeapi.ListContainersRequest) (*runtimeapi.ListContainersResponse, error) {
	f := req.GetFilter()
	s.r.mu.Lock()
	ctrs := slices.Collect(maps.Values(s.r.containers))
	s.r.mu.Unlock()
	var out []*runtimeapi.Container
	for _, c := range ctrs {
		ct := c.summary()
		if f.GetId() != "" && !strings.HasPrefix(ct.Id, f.GetId()) {
			continue
		}
		if f.GetPodSandboxId() != "" && !strings.HasPrefix(ct.PodSandboxId, f.GetPodSandboxId()) {
			continue
		}
		if f.GetState() != nil && f.GetState().GetState() != ct.State {
			continue
		}
		if !labelsMatch(f.GetLabelSelector(), ct.Labels) {
			continue
		}
		out = append(out, ct)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt > out[j].CreatedAt })
	return &runtimeapi.ListContainersResponse{Containers: out}, nil
}

// ContainerStatus reports one container.
func (s *runtimeService) ContainerStatus(_ context.Context, req *runtimeapi.ContainerStatusRequest) (*runtimeapi.ContainerStatusResponse, error) {
	c, err := s.r.findContainer(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	resp := &runtimeapi.ContainerStatusResponse{Status: c.status()}
	if req.GetVerbose() {
		c.mu.Lock()
		pid := c.pid
		c.mu.Unlock()
		resp.Info = map[string]string{"info": jsonString(map[string]any{"pid": pid, "sandboxID": c.podID, "command": c.spec.argv, "runtime": RuntimeName})}
	}
	return resp, nil
}

// containerStats reports a container with no usage figures: the mock makes
// no cgroups to measure.
func containerStats(c *container) *runtimeapi.ContainerStats {
	return &runtimeapi.ContainerStats{Attributes: &runtimeapi.ContainerAttributes{
		Id:          c.id,
		Metadata:    c.config.GetMetadata(),
		Labels:      maps.Clone(c.config.GetLabels()),
		Annotations: maps.Clone(c.config.GetAnnotations()),
	}}
}

// ContainerStats reports one container (attributes only).
func (s *runtimeService) ContainerStats(_ context.Context, req *runtimeapi.ContainerStatsRequest) (*runtimeapi.ContainerStatsResponse, error) {
	c, err := s.r.findContainer(req.GetContainerId())
	if err != nil {
		return nil, err
	}
	return &runtimeapi.ContainerStatsResponse{Stats: containerStats(c)}, nil
}

// ListContainerStats reports the running containers (attributes only), so
// that crictl stats works.
func (s *runtimeService) ListContainerStats(ctx context.Context, req *runtimeapi.ListContainerStatsRequest) (*runtimeapi.ListContainerStatsResponse, error) {
	f := req.GetFilter()
	list, err := s.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
		Id:            f.GetId(),
		PodSandboxId:  f.GetPodSandboxId(),
		LabelSelector: f.GetLabelSelector(),
		State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
	}})
	if err != nil {
		return nil, err
	}
	resp := &runtimeapi.ListContainerStatsResponse{}
	for _, ct := range list.Containers {
		if c, err := s.r.findContainer(ct.Id); err == nil {
			resp.Stats = append(resp.Stats, containerStats(c))
		}
	}
	return resp, nil
}

// ListPodSandboxStats answers empty: there are no pod cgroups to measure.
func (s *runtimeService) ListPodSandboxStats(context.Context, *runtimeapi.ListPodSandboxStatsRequest) (*runtimeapi.ListPodSandboxStatsResponse, error) {
	return &runtimeapi.ListPodSandboxStatsResponse{}, nil
}

// UpdateContainerResources accepts and ignores new limits: the mock makes
// no cgroups.
func (s *runtimeService) UpdateContainerResources(_ context.Context, req *runtimeapi.UpdateContainerResourcesRequest) (*runtimeapi.UpdateContainerResourcesResponse, error) {
	if _, err := s.r.findContainer(req.GetContainerId()); err != nil {
		return nil, err
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

// ListImages lists the images the runtime has, filtered by image name.
func (s *imageService) ListImages(_ context.Context, req *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	imgs := s.r.images.list()
	if want := req.GetFilter().GetImage().GetImage(); want != "" {
		img := s.r.images.find(want)
		imgs = nil
		if img != nil {
			imgs = []*runtimeapi.Image{img}
		}
	}
	return &runtimeapi.ListImagesResponse{Images: imgs}, nil
}

// ImageStatus reports an image, or no image (not an error) when the runtime
// does not have it, as the CRI asks.
func (s *imageService) ImageStatus(_ context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	ref := req.GetImage().GetImage()
	if ref == "" {
		return nil, invalidf("image status needs an image name or ID")
	}
	return &runtimeapi.ImageStatusResponse{Image: s.r.images.find(ref)}, nil
}

// PullImage records the image: the mock runs programs of the host, so there
// is nothing to download.
func (s *imageService) PullImage(_ context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	ref := req.GetImage().GetImage()
	if ref == "" {
		return nil, invalidf("pull needs an image name")
	}
	if strings.ContainsAny(ref, " \t\n") {
		return nil, invalidf("image name %q contains white space", ref)
	}
	img := s.r.images.add(ref)
	return &runtimeapi.PullImageResponse{ImageRef: img.Id}, nil
}

// RemoveImage forgets an image.
func (s *imageService) RemoveImage(_ context.Context, req *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error) {
	ref := req.GetImage().GetImage()
	if ref == "" {
		return nil, invalidf("remove needs an image name or ID")
	}
	img := s.r.images.find(ref)
	if img == nil {
		return nil, status.Errorf(codes.NotFound, "image %q not found", ref)
	}
	s.r.images.remove(img)
	return &runtimeapi.RemoveImageResponse{}, nil
}

// ImageFsInfo reports the runtime's temporary folder as its image store.
func (s *imageService) ImageFsInfo(context.Context, *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	usage := &runtimeapi.FilesystemUsage{
		Timestamp:  time.Now().UnixNano(),
		FsId:       &runtimeapi.FilesystemIdentifier{Mountpoint: s.r.tmpDir},
		UsedBytes:  &runtimeapi.UInt64Value{Value: 0},
		InodesUsed: &runtimeapi.UInt64Value{Value: 0},
	}
	return &runtimeapi.ImageFsInfoResponse{ImageFilesystems: []*runtimeapi.FilesystemUsage{usage}}, nil
}
