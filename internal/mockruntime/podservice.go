package mockruntime

import (
	"context"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ignoreNotFound makes the removal of what is already gone succeed: the CRI
// asks Stop and Remove calls to be idempotent.
func ignoreNotFound(err error) error {
	if status.Code(err) == codes.NotFound {
		return nil
	}
	return err
}

// RunPodSandbox records a ready pod and maps its host ports.
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
	var existing string // ReuseMatchingPod: the matching pod's ID
	err := func() error {
		s.r.mu.Lock()
		defer s.r.mu.Unlock()
		if s.r.closing {
			return status.Error(codes.Unavailable, "the mock runtime is shutting down")
		}
		for _, other := range s.r.pods {
			om := other.config.GetMetadata()
			if om.GetName() == md.GetName() && om.GetNamespace() == md.GetNamespace() && om.GetUid() == md.GetUid() && om.GetAttempt() == md.GetAttempt() {
				if s.r.cfg.Quirks.ReuseMatchingPod {
					existing = other.id
					return nil
				}
				return status.Errorf(codes.AlreadyExists, "pod sandbox %s (name %q, namespace %q, uid %q, attempt %d) already exists; remove it or change the attempt", other.id, md.GetName(), md.GetNamespace(), md.GetUid(), md.GetAttempt())
			}
		}
		proxies, err := s.r.startPortProxies(p, cfg.GetPortMappings())
		if err != nil {
			return status.Errorf(codes.Unknown, "set up the network of pod sandbox %q: %v", md.GetName(), err)
		}
		p.proxies = proxies
		s.r.pods[p.id] = p
		if d := s.r.cfg.RemoveOrphanPodsAfter; d > 0 && cfg.GetLabels()[KubeletPodUIDLabel] == "" {
			s.r.wg.Add(1) // under mu, before closing: Close waits for it
			go s.removeOrphanAfter(p.id, d)
		}
		return nil
	}()
	if err != nil {
		return nil, err
	}
	if existing != "" {
		return &runtimeapi.RunPodSandboxResponse{PodSandboxId: existing}, nil
	}
	s.r.podEvent(p, runtimeapi.ContainerEventType_CONTAINER_CREATED_EVENT)
	s.r.podEvent(p, runtimeapi.ContainerEventType_CONTAINER_STARTED_EVENT)
	return &runtimeapi.RunPodSandboxResponse{PodSandboxId: p.id}, nil
}

// KubeletPodUIDLabel is the label a kubelet puts on every pod sandbox it
// creates; a kubelet removes the pods that lack it (RemoveOrphanPodsAfter).
const KubeletPodUIDLabel = "io.kubernetes.pod.uid"

// removeOrphanAfter stops and removes pod id after d, as a kubelet removes
// a runtime pod it did not create; Close ends the wait.
func (s *runtimeService) removeOrphanAfter(id string, d time.Duration) {
	defer s.r.wg.Done()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-s.r.done:
		return
	}
	s.r.cfg.Logf("removing orphaned pod %s (created without the kubelet's labels)", id)
	_, _ = s.RemovePodSandbox(context.Background(), &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id}) // removing an unknown pod succeeds; nothing else can fail
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
	sort.Slice(out, func(i, j int) bool { return out[i].createdAt < out[j].createdAt })
	return out
}

// StopPodSandbox kills the pod's containers, unmaps its ports and marks it
// not ready. Stopping a stopped or unknown pod succeeds.
func (s *runtimeService) StopPodSandbox(_ context.Context, req *runtimeapi.StopPodSandboxRequest) (*runtimeapi.StopPodSandboxResponse, error) {
	p, err := s.r.findPod(req.GetPodSandboxId())
	if err != nil {
		return &runtimeapi.StopPodSandboxResponse{}, ignoreNotFound(err)
	}
	s.r.stopPod(p)
	return &runtimeapi.StopPodSandboxResponse{}, nil
}

func (r *Runtime) stopPod(p *pod) {
	for _, c := range r.containersOf(p.id) {
		c.stop(0)
	}
	p.mu.Lock()
	wasReady := p.state == runtimeapi.PodSandboxState_SANDBOX_READY
	p.state = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	proxies := p.proxies
	p.proxies = nil
	p.mu.Unlock()
	closeProxies(proxies)
	if wasReady {
		r.podEvent(p, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT)
	}
}

// RemovePodSandbox stops the pod, removes its containers, then the pod.
// Removing an unknown pod succeeds.
func (s *runtimeService) RemovePodSandbox(_ context.Context, req *runtimeapi.RemovePodSandboxRequest) (*runtimeapi.RemovePodSandboxResponse, error) {
	p, err := s.r.findPod(req.GetPodSandboxId())
	if err != nil {
		return &runtimeapi.RemovePodSandboxResponse{}, ignoreNotFound(err)
	}
	s.r.stopPod(p)
	for _, c := range s.r.containersOf(p.id) {
		s.r.removeContainer(c)
	}
	s.r.mu.Lock()
	_, present := s.r.pods[p.id]
	delete(s.r.pods, p.id)
	s.r.mu.Unlock()
	if present {
		s.r.podEvent(p, runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT)
	}
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

// status is the pod's status, with 127.0.0.1 as its IP: pods share the
// host loopback.
func (p *pod) status() *runtimeapi.PodSandboxStatus {
	sb := p.sandbox()
	nsOpts := p.config.GetLinux().GetSecurityContext().GetNamespaceOptions()
	if nsOpts == nil {
		nsOpts = &runtimeapi.NamespaceOption{}
	}
	return &runtimeapi.PodSandboxStatus{
		Id:             sb.Id,
		Metadata:       sb.Metadata,
		State:          sb.State,
		CreatedAt:      sb.CreatedAt,
		Network:        &runtimeapi.PodSandboxNetworkStatus{Ip: "127.0.0.1"},
		Linux:          &runtimeapi.LinuxPodSandboxStatus{Namespaces: &runtimeapi.Namespace{Options: nsOpts}},
		Labels:         sb.Labels,
		Annotations:    sb.Annotations,
		RuntimeHandler: sb.RuntimeHandler,
	}
}

// PodSandboxStatus reports the pod; verbose adds the mock's view of it.
func (s *runtimeService) PodSandboxStatus(_ context.Context, req *runtimeapi.PodSandboxStatusRequest) (*runtimeapi.PodSandboxStatusResponse, error) {
	p, err := s.r.findPod(req.GetPodSandboxId())
	if err != nil {
		return nil, err
	}
	resp := &runtimeapi.PodSandboxStatusResponse{Status: p.status()}
	if req.GetVerbose() {
		resp.Info = map[string]string{"info": jsonString(map[string]any{
			"runtime": RuntimeName, "network": "host loopback", "runtimeHandler": p.runtimeHandler,
			"config": p.config, "portMappings": p.config.GetPortMappings(),
		})}
	}
	// As with evented PLEG: the containers' statuses, and when they were
	// taken.
	resp.ContainersStatuses = s.r.containerStatuses(p.id)
	resp.Timestamp = time.Now().UnixNano()
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
