package client

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// PodFilter selects pod sandboxes. Zero fields match everything. The runtime
// is asked to filter by ID, state and labels, and every filter is applied
// again here, so a runtime that ignores CRI filters still lists correctly.
type PodFilter struct {
	// ID is a full pod ID or a prefix of one.
	ID string
	// Name and Namespace are regular expressions matched against the pod's
	// metadata, as crictl's --name and --namespace are.
	Name      *regexp.Regexp
	Namespace *regexp.Regexp
	// State is "ready" or "notready" (any case); empty matches both.
	State string
	// Labels must all be present with these values.
	Labels map[string]string
	// Last keeps the N most recently created matches (0: all).
	Last int
}

// ContainerFilter selects containers. Zero fields match everything except
// State: with All false and no State, only running containers match (crictl
// ps without -a).
type ContainerFilter struct {
	// ID is a full container ID or a prefix of one.
	ID   string
	Name *regexp.Regexp
	// Namespace matches the namespace of the container's pod (crictl ps
	// --namespace).
	Namespace *regexp.Regexp
	// State is created, running, exited or unknown (any case).
	State string
	// PodID is a full pod sandbox ID; Pod is a reference to one (ID, ID
	// prefix or name), resolved by ListContainers.
	PodID, Pod string
	Labels     map[string]string
	// Image is an image name, tag or ID: containers created from it match,
	// however they named it (the runtime is asked what image it means).
	Image string
	// All lists containers in every state.
	All bool
	// Last keeps the N most recently created matches (0: all).
	Last int
}

// PodStates and ContainerStates are the values --state accepts.
var (
	PodStates       = []string{"ready", "notready"}
	ContainerStates = []string{"created", "running", "exited", "unknown"}
)

// ParsePodState turns "ready"/"notready" into the CRI enum.
func ParsePodState(s string) (runtimeapi.PodSandboxState, error) {
	switch strings.ToLower(s) {
	case "ready", "sandbox_ready":
		return runtimeapi.PodSandboxState_SANDBOX_READY, nil
	case "notready", "not-ready", "sandbox_notready":
		return runtimeapi.PodSandboxState_SANDBOX_NOTREADY, nil
	}
	return 0, fmt.Errorf("pod state %q: want one of %s", s, strings.Join(PodStates, ", "))
}

// ParseContainerState turns created/running/exited/unknown into the CRI enum.
func ParseContainerState(s string) (runtimeapi.ContainerState, error) {
	switch strings.ToLower(s) {
	case "created", "container_created":
		return runtimeapi.ContainerState_CONTAINER_CREATED, nil
	case "running", "container_running":
		return runtimeapi.ContainerState_CONTAINER_RUNNING, nil
	case "exited", "container_exited":
		return runtimeapi.ContainerState_CONTAINER_EXITED, nil
	case "unknown", "container_unknown":
		return runtimeapi.ContainerState_CONTAINER_UNKNOWN, nil
	}
	return 0, fmt.Errorf("container state %q: want one of %s", s, strings.Join(ContainerStates, ", "))
}

// ParseLabels turns k=v pairs (from repeated --label flags) into a map.
func ParseLabels(pairs []string) (map[string]string, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	labels := make(map[string]string, len(pairs))
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("label %q: want key=value", p)
		}
		labels[k] = v
	}
	return labels, nil
}

// PodStateName is the short state crisp prints: Ready or NotReady.
func PodStateName(s runtimeapi.PodSandboxState) string {
	switch s {
	case runtimeapi.PodSandboxState_SANDBOX_READY:
		return "Ready"
	case runtimeapi.PodSandboxState_SANDBOX_NOTREADY:
		return "NotReady"
	}
	return s.String()
}

// ContainerStateName is the short state crisp prints: Created, Running,
// Exited or Unknown.
func ContainerStateName(s runtimeapi.ContainerState) string {
	switch s {
	case runtimeapi.ContainerState_CONTAINER_CREATED:
		return "Created"
	case runtimeapi.ContainerState_CONTAINER_RUNNING:
		return "Running"
	case runtimeapi.ContainerState_CONTAINER_EXITED:
		return "Exited"
	case runtimeapi.ContainerState_CONTAINER_UNKNOWN:
		return "Unknown"
	}
	return s.String()
}

// ListPods lists pod sandboxes matching f, newest first.
func (c *Client) ListPods(ctx context.Context, f PodFilter) ([]*runtimeapi.PodSandbox, error) {
	req := &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{LabelSelector: f.Labels}}
	var state *runtimeapi.PodSandboxState
	if f.State != "" {
		s, err := ParsePodState(f.State)
		if err != nil {
			return nil, err
		}
		state = &s
		req.Filter.State = &runtimeapi.PodSandboxStateValue{State: s}
	}
	// A prefix cannot go to the runtime: CRI filters by exact ID.
	var resp *runtimeapi.ListPodSandboxResponse
	err := c.Call(ctx, "listing pods", func(ctx context.Context) (err error) {
		resp, err = c.Runtime.ListPodSandbox(ctx, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]*runtimeapi.PodSandbox, 0, len(resp.GetItems()))
	for _, p := range resp.GetItems() {
		md := p.GetMetadata()
		switch {
		case f.ID != "" && !strings.HasPrefix(p.GetId(), f.ID),
			state != nil && p.GetState() != *state,
			f.Name != nil && !f.Name.MatchString(md.GetName()),
			f.Namespace != nil && !f.Namespace.MatchString(md.GetNamespace()),
			!hasLabels(p.GetLabels(), f.Labels):
			continue
		}
		out = append(out, p)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].GetCreatedAt() > out[j].GetCreatedAt() })
	return newest(out, f.Last), nil
}

// newest keeps the first n of items, sorted newest first (0: all).
func newest[T any](items []T, n int) []T {
	if n > 0 && len(items) > n {
		return items[:n]
	}
	return items
}

// ListContainers lists containers matching f, newest first.
func (c *Client) ListContainers(ctx context.Context, f ContainerFilter) ([]*runtimeapi.Container, error) {
	if f.Pod != "" {
		pod, err := c.ResolvePod(ctx, f.Pod)
		if err != nil {
			return nil, fmt.Errorf("--pod: %w", err)
		}
		f.PodID = pod.GetId()
	}
	req := &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
		PodSandboxId:  f.PodID,
		LabelSelector: f.Labels,
	}}
	var state *runtimeapi.ContainerState
	switch {
	case f.State != "":
		s, err := ParseContainerState(f.State)
		if err != nil {
			return nil, err
		}
		state = &s
	case !f.All:
		s := runtimeapi.ContainerState_CONTAINER_RUNNING
		state = &s
	}
	if state != nil {
		req.Filter.State = &runtimeapi.ContainerStateValue{State: *state}
	}
	var resp *runtimeapi.ListContainersResponse
	err := c.Call(ctx, "listing containers", func(ctx context.Context) (err error) {
		resp, err = c.Runtime.ListContainers(ctx, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	var imageID string
	if f.Image != "" {
		st, err := c.ImageStatus(ctx, f.Image, false)
		if err != nil {
			return nil, err
		}
		imageID = st.GetImage().GetId()
	}
	var inNamespace map[string]bool
	if f.Namespace != nil {
		pods, err := c.ListPods(ctx, PodFilter{Namespace: f.Namespace})
		if err != nil {
			return nil, err
		}
		inNamespace = make(map[string]bool, len(pods))
		for _, p := range pods {
			inNamespace[p.GetId()] = true
		}
	}
	out := make([]*runtimeapi.Container, 0, len(resp.GetContainers()))
	for _, ctr := range resp.GetContainers() {
		switch {
		case inNamespace != nil && !inNamespace[ctr.GetPodSandboxId()]:
			continue
		case f.Image != "" && !usesImage(ctr, f.Image, imageID):
			continue
		case f.ID != "" && !strings.HasPrefix(ctr.GetId(), f.ID),
			state != nil && ctr.GetState() != *state,
			f.PodID != "" && ctr.GetPodSandboxId() != f.PodID,
			f.Name != nil && !f.Name.MatchString(ctr.GetMetadata().GetName()),
			!hasLabels(ctr.GetLabels(), f.Labels):
			continue
		}
		out = append(out, ctr)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].GetCreatedAt() > out[j].GetCreatedAt() })
	return newest(out, f.Last), nil
}

// ListImages lists images; a non-empty ref asks the runtime for that image
// only (by name, tag or ID, as the runtime understands it) and filters
// again here (see MatchImage): some runtimes ignore the filter. Images come
// in the runtime's order (SortImages gives crictl's).
func (c *Client) ListImages(ctx context.Context, ref string) ([]*runtimeapi.Image, error) {
	req := &runtimeapi.ListImagesRequest{}
	if ref != "" && !isBareRepo(ref) { // a bare repository: every tag, matched here
		req.Filter = &runtimeapi.ImageFilter{Image: &runtimeapi.ImageSpec{Image: ref}}
	}
	var resp *runtimeapi.ListImagesResponse
	err := c.CallImages(ctx, "listing images", func(ctx context.Context) (err error) {
		resp, err = c.Images.ListImages(ctx, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	// What the runtime itself resolves ref to counts as a match too, so a
	// reference only the runtime understands still lists its image.
	var resolved string
	if ref != "" {
		st, err := c.ImageStatus(ctx, ref, false)
		if err != nil {
			return nil, err
		}
		resolved = st.GetImage().GetId()
	}
	out := resp.GetImages()[:0]
	for _, img := range resp.GetImages() {
		if MatchImage(img, ref) || (resolved != "" && img.GetId() == resolved) {
			out = append(out, img)
		}
	}
	return out, nil
}

// SortImages puts images in the order crictl images prints them: by first
// tag when both have one, else by first digest when both have one, else by
// ID, through sort.Sort as crictl does. That comparison does not order
// tagged against untagged images consistently, so where an untagged image
// lands depends on the runtime's order and the sort's steps: only the same
// comparison, on the same input, with the same algorithm, lands it where
// crictl does.
func SortImages(images []*runtimeapi.Image) {
	sort.Sort(imagesCrictlOrder(images))
}

type imagesCrictlOrder []*runtimeapi.Image

func (a imagesCrictlOrder) Len() int      { return len(a) }
func (a imagesCrictlOrder) Swap(i, j int) { a[i], a[j] = a[j], a[i] }
func (a imagesCrictlOrder) Less(i, j int) bool {
	ti, tj := a[i].GetRepoTags(), a[j].GetRepoTags()
	if len(ti) > 0 && len(tj) > 0 {
		return ti[0] < tj[0]
	}
	di, dj := a[i].GetRepoDigests(), a[j].GetRepoDigests()
	if len(di) > 0 && len(dj) > 0 {
		return di[0] < dj[0]
	}
	return a[i].GetId() < a[j].GetId()
}

// usesImage reports whether ctr was created from the image a user named
// ref, which the image service knows as id ("" when it does not hold it).
func usesImage(ctr *runtimeapi.Container, ref, id string) bool {
	if id != "" && (ctr.GetImageRef() == id || ctr.GetImageId() == id || ctr.GetImage().GetImage() == id) {
		return true
	}
	spec := ctr.GetImage()
	return spec.GetImage() == ref || spec.GetUserSpecifiedImage() == ref
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}
