package mockruntime

import (
	"context"
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
func (s *runtimeService) CreateContainer(ctx context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
	resp, err := s.createContainer(ctx, req)
	if err != nil {
		return nil, err
	}
	if c, err := s.r.findContainer(resp.ContainerId); err == nil {
		s.r.containerEvent(c, runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT)
	}
	return resp, nil
}

func (s *runtimeService) createContainer(_ context.Context, req *runtimeapi.CreateContainerRequest) (*runtimeapi.CreateContainerResponse, error) {
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
	if s.r.cfg.Quirks.RequireUserSpecifiedImage && cfg.GetImage().GetUserSpecifiedImage() == "" {
		// CRI-O's words, with signature_policy set.
		return nil, status.Error(codes.Unknown, "user specified image not specified, cannot verify image signature")
	}
	if sc := cfg.GetLinux().GetSecurityContext(); sc.GetRunAsGroup() != nil && sc.GetRunAsUser() == nil && sc.GetRunAsUsername() == "" {
		return nil, invalidf("container config sets run_as_group without run_as_user or run_as_username: a group needs a user")
	}
	if err := s.r.checkPIDTarget(p.id, cfg); err != nil {
		return nil, err
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
		resources: cfg.GetLinux().GetResources(),
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
		case imageWebServer, imagePause:
			// A built-in task runs; there is no host process.
		default:
			return invalidf("image %q has no default command in the mock runtime (only busybox-like, pause-like and nginx/httpd images do); give the container a command", c.imageName)
		}
	}
	hostname := p.config.GetHostname()
	if hostname == "" {
		hostname = p.config.GetMetadata().GetName()
	}
	env := []string{"PATH=" + r.procEnv.pathFor(c.kind), "HOSTNAME=" + hostname, "HOME=/root", containerMarker + "=" + c.id}
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
	p, err := s.r.findPod(c.podID)
	if err != nil || p.getState() != runtimeapi.PodSandboxState_SANDBOX_READY {
		return nil, status.Errorf(codes.FailedPrecondition, "pod sandbox %s of container %s is not ready", c.podID, c.id)
	}
	err = func() error {
		s.r.mu.Lock()
		defer s.r.mu.Unlock()
		if s.r.closing {
			return status.Error(codes.Unavailable, "the mock runtime is shutting down")
		}
		if st := c.getState(); st != runtimeapi.ContainerState_CONTAINER_CREATED {
			return status.Errorf(codes.FailedPrecondition, "container %s is %s; only a created container can be started", c.id, stateName(st))
		}
		if err := c.start(p); err != nil {
			return status.Errorf(codes.Unknown, "start container %s: %v", c.id, err)
		}
		return nil
	}()
	if err != nil {
		return nil, err
	}
	s.r.containerEvent(c, runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT)
	return &runtimeapi.StartContainerResponse{}, nil
}

// StopContainer stops the container (SIGTERM, SIGKILL after the timeout).
// Stopping a stopped or unknown container succeeds.
func (s *runtimeService) StopContainer(_ context.Context, req *runtimeapi.StopContainerRequest) (*runtimeapi.StopContainerResponse, error) {
	c, err := s.r.findContainer(req.GetContainerId())
	if err != nil {
		return &runtimeapi.StopContainerResponse{}, ignoreNotFound(err)
	}
	c.stop(req.GetTimeout())
	return &runtimeapi.StopContainerResponse{}, nil
}

// RemoveContainer removes the container, killing it first if it runs.
// Removing an unknown container succeeds.
func (s *runtimeService) RemoveContainer(_ context.Context, req *runtimeapi.RemoveContainerRequest) (*runtimeapi.RemoveContainerResponse, error) {
	c, err := s.r.findContainer(req.GetContainerId())
	if err != nil {
		return &runtimeapi.RemoveContainerResponse{}, ignoreNotFound(err)
	}
	s.r.removeContainer(c)
	return &runtimeapi.RemoveContainerResponse{}, nil
}

// removeContainer kills c and forgets it.
func (r *Runtime) removeContainer(c *container) {
	c.stop(0)
	r.mu.Lock()
	_, present := r.containers[c.id]
	delete(r.containers, c.id)
	r.mu.Unlock()
	if present {
		r.containerEvent(c, runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT)
	}
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
		info := map[string]any{"pid": pid, "sandboxID": c.podID, "command": c.spec.argv, "runtime": RuntimeName}
		if ns := c.config.GetLinux().GetSecurityContext().GetNamespaceOptions(); ns != nil {
			info["namespaceOptions"] = map[string]any{"network": ns.GetNetwork().String(), "pid": ns.GetPid().String(), "ipc": ns.GetIpc().String(), "targetID": ns.GetTargetId()}
		}
		resp.Info = map[string]string{"info": jsonString(info)}
	}
	return resp, nil
}

// checkPIDTarget checks a container's PID namespace TARGET as containerd
// does: the target exists, is in the same pod and runs. The mock's
// containers are host processes in the host's PID namespace, so one
// created with TARGET sees the target's processes as every container of
// the mock does: the option is checked and recorded (verbose status), not
// enforced.
func (r *Runtime) checkPIDTarget(podID string, cfg *runtimeapi.ContainerConfig) error {
	ns := cfg.GetLinux().GetSecurityContext().GetNamespaceOptions()
	if ns.GetPid() != runtimeapi.NamespaceMode_TARGET {
		return nil
	}
	if ns.GetTargetId() == "" {
		return invalidf("PID namespace mode TARGET needs a target_id")
	}
	target, err := r.findContainer(ns.GetTargetId())
	if err != nil {
		return status.Errorf(codes.NotFound, "target container %q does not exist", ns.GetTargetId())
	}
	if target.podID != podID {
		return invalidf("target container %q belongs to a different sandbox", ns.GetTargetId())
	}
	if target.getState() != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return status.Errorf(codes.FailedPrecondition, "target container %q must be in running state", ns.GetTargetId())
	}
	return nil
}
