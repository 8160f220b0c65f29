package client

import (
	"context"
	"sort"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// How crisp tells that a kubelet manages a runtime: the kubelet labels every
// pod sandbox it creates with the pod's namespace, name and UID; crisp's own
// pods and crictl's do not carry these labels. A kubelet stops and removes
// every runtime pod it did not create ("orphaned pod") within seconds.
const (
	KubeletPodUIDLabel       = "io.kubernetes.pod.uid"
	KubeletPodNameLabel      = "io.kubernetes.pod.name"
	KubeletPodNamespaceLabel = "io.kubernetes.pod.namespace"
)

// KubeletPods names the runtime's pods a kubelet created (namespace/name,
// sorted, each once): none means no kubelet manages the runtime, as far as
// its pods tell.
func (c *Client) KubeletPods(ctx context.Context) ([]string, error) {
	pods, err := c.ListPods(ctx, PodFilter{})
	if err != nil {
		return nil, err
	}
	return KubeletPodNames(pods), nil
}

// KubeletPodNames picks the kubelet's pods out of pods (see KubeletPods).
func KubeletPodNames(pods []*runtimeapi.PodSandbox) []string {
	seen := map[string]bool{}
	var names []string
	for _, p := range pods {
		labels := p.GetLabels()
		if labels[KubeletPodUIDLabel] == "" {
			continue
		}
		name := labels[KubeletPodNamespaceLabel] + "/" + labels[KubeletPodNameLabel]
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// IsKubeletPod reports whether cfg is a pod a kubelet would call its own.
func IsKubeletPod(cfg *runtimeapi.PodSandboxConfig) bool {
	return cfg.GetLabels()[KubeletPodUIDLabel] != ""
}
