package client

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// IsFullID says whether ref has the form of a full container or pod ID as
// containerd and CRI-O make them: 64 lowercase hex digits.
func IsFullID(ref string) bool {
	if len(ref) != 64 {
		return false
	}
	for _, r := range ref {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

// ResolveContainer finds the container a user means by a full ID, a unique ID
// prefix or a unique name. Ambiguity is an error listing the candidates.
func (c *Client) ResolveContainer(ctx context.Context, ref string) (*runtimeapi.Container, error) {
	return c.ResolveContainerIn(ctx, ref, "")
}

// ResolveContainerIn is ResolveContainer among the containers of the pod
// podID only ("": every pod's).
func (c *Client) ResolveContainerIn(ctx context.Context, ref, podID string) (*runtimeapi.Container, error) {
	if ref == "" {
		return nil, fmt.Errorf("empty container reference")
	}
	req := &runtimeapi.ListContainersRequest{}
	if podID != "" {
		req.Filter = &runtimeapi.ContainerFilter{PodSandboxId: podID}
	}
	var resp *runtimeapi.ListContainersResponse
	err := c.Call(ctx, "listing containers", func(ctx context.Context) (err error) {
		resp, err = c.Runtime.ListContainers(ctx, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	items := make([]candidate[*runtimeapi.Container], 0, len(resp.Containers))
	byID := map[string]*runtimeapi.Container{}
	for _, ctr := range resp.Containers {
		items = append(items, candidate[*runtimeapi.Container]{id: ctr.Id, name: ctr.GetMetadata().GetName(), item: ctr,
			live: ctr.GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING})
		byID[ctr.Id] = ctr
	}
	ctr, err := pick("container", ref, c.Endpoint, items)
	var amb *AmbiguousError
	if errors.As(err, &amb) {
		c.describeContainers(ctx, amb, byID)
	}
	return ctr, err
}

// describeContainers names each candidate container of amb with its state
// and its pod (namespace/name), so that the user can tell them apart. The
// pods are listed only here, on ambiguity; if that fails the candidates
// keep their IDs and names.
func (c *Client) describeContainers(ctx context.Context, amb *AmbiguousError, byID map[string]*runtimeapi.Container) {
	var resp *runtimeapi.ListPodSandboxResponse
	err := c.Call(ctx, "listing pods", func(ctx context.Context) (err error) {
		resp, err = c.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
		return err
	})
	if err != nil {
		return
	}
	pods := map[string]string{}
	for _, p := range resp.Items {
		pods[p.Id] = p.GetMetadata().GetNamespace() + "/" + p.GetMetadata().GetName()
	}
	amb.Candidates = amb.Candidates[:0]
	for _, id := range amb.ids {
		x := byID[id]
		pod := pods[x.GetPodSandboxId()]
		if pod == "" {
			pod = x.GetPodSandboxId()
		}
		amb.Candidates = append(amb.Candidates, fmt.Sprintf("%s (%s, %s, pod %s)", id, x.GetMetadata().GetName(),
			ContainerStateName(x.GetState()), pod))
	}
	sort.Strings(amb.Candidates)
}

// ResolvePod finds the pod sandbox a user means by a full ID, a unique ID
// prefix or a unique name.
func (c *Client) ResolvePod(ctx context.Context, ref string) (*runtimeapi.PodSandbox, error) {
	if ref == "" {
		return nil, fmt.Errorf("empty pod reference")
	}
	var resp *runtimeapi.ListPodSandboxResponse
	err := c.Call(ctx, "listing pods", func(ctx context.Context) (err error) {
		resp, err = c.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
		return err
	})
	if err != nil {
		return nil, err
	}
	items := make([]candidate[*runtimeapi.PodSandbox], 0, len(resp.Items))
	byID := map[string]*runtimeapi.PodSandbox{}
	for _, pod := range resp.Items {
		items = append(items, candidate[*runtimeapi.PodSandbox]{id: pod.Id, name: pod.GetMetadata().GetName(), item: pod,
			live: pod.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY})
		byID[pod.Id] = pod
	}
	pod, err := pick("pod", ref, c.Endpoint, items)
	var amb *AmbiguousError
	if errors.As(err, &amb) {
		// Each candidate with its state and namespace.
		amb.Candidates = amb.Candidates[:0]
		for _, id := range amb.ids {
			p := byID[id]
			amb.Candidates = append(amb.Candidates, fmt.Sprintf("%s (%s, %s, namespace %s)", id, p.GetMetadata().GetName(),
				PodStateName(p.GetState()), p.GetMetadata().GetNamespace()))
		}
		sort.Strings(amb.Candidates)
	}
	return pod, err
}

type candidate[T any] struct {
	id, name string
	item     T
	// live marks a running container or a ready pod: when a name matches
	// several, the one live match wins, because a restarted container
	// leaves its exited attempts behind under the same name.
	live bool
}

// pick applies the precedence: exact ID, exact name (the live one when a
// name matches several), unique ID prefix.
func pick[T any](kind, ref, endpoint string, items []candidate[T]) (T, error) {
	var zero T
	for _, it := range items {
		if it.id == ref {
			return it.item, nil
		}
	}
	var byName, byPrefix []candidate[T]
	for _, it := range items {
		if it.name == ref {
			byName = append(byName, it)
		}
		if strings.HasPrefix(it.id, ref) {
			byPrefix = append(byPrefix, it)
		}
	}
	if len(byName) > 1 {
		var live []candidate[T]
		for _, it := range byName {
			if it.live {
				live = append(live, it)
			}
		}
		if len(live) == 1 {
			return live[0].item, nil
		}
	}
	for _, set := range [][]candidate[T]{byName, byPrefix} {
		switch len(set) {
		case 0:
			continue
		case 1:
			return set[0].item, nil
		default:
			ids := make([]string, len(set))
			for i, it := range set {
				ids[i] = it.id
			}
			return zero, &AmbiguousError{Kind: kind, Ref: ref, Candidates: describeCandidates(set), ids: ids}
		}
	}
	return zero, &NotFoundError{Kind: kind, Ref: ref, Endpoint: endpoint}
}

func describeCandidates[T any](set []candidate[T]) []string {
	out := make([]string, 0, len(set))
	for _, it := range set {
		out = append(out, fmt.Sprintf("%s (%s)", it.id, it.name))
	}
	sort.Strings(out)
	return out
}

// NotFoundError means no container or pod matches a reference.
type NotFoundError struct{ Kind, Ref, Endpoint string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no %s matches %q on runtime %s (by ID, ID prefix or name); list them with `crisp %s`",
		e.Kind, e.Ref, e.Endpoint, map[string]string{"container": "ps -a", "pod": "pods"}[e.Kind])
}

// AmbiguousError means a reference matches more than one container or pod.
type AmbiguousError struct {
	Kind, Ref string
	// Candidates describe the matches, one each: ID and name, and for a
	// container its state and pod, for a pod its state and namespace.
	Candidates []string
	ids        []string // the candidates' IDs
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%q matches %d %ss: %s; give more of the ID", e.Ref, len(e.Candidates), e.Kind, strings.Join(e.Candidates, ", "))
}
