package output

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/base/termsafe"
	"github.com/crisp-cri/crisp/internal/client"
)

// crictl's -v listings (ps -v, pods -v, images -v): one block of
// "Key: value" lines an object, a blank line after each, in crictl's words
// and order. Every value a container or runtime chose is escaped (safe): a
// label is the easiest place for a tenant to put an escape sequence.

// safe is termsafe.Printable.
func safe(s string) string { return termsafe.Printable(s) }

// ContainersVerbose is ps -v. The namespace is the pod's (the kubelet's
// label when the pod is not known).
func ContainersVerbose(w io.Writer, now time.Time, ctrs []*runtimeapi.Container, pods map[string]*runtimeapi.PodSandbox) {
	var b strings.Builder
	for _, c := range ctrs {
		ns := c.GetLabels()["io.kubernetes.pod.namespace"]
		if sb := pods[c.GetPodSandboxId()]; sb != nil {
			ns = sb.GetMetadata().GetNamespace()
		}
		fmt.Fprintf(&b, "ID: %s\nPodID: %s\nNamespace: %s\n", safe(c.GetId()), safe(c.GetPodSandboxId()), safe(ns))
		if md := c.GetMetadata(); md != nil {
			if md.GetName() != "" {
				fmt.Fprintf(&b, "Name: %s\n", safe(md.GetName()))
			}
			fmt.Fprintf(&b, "Attempt: %d\n", md.GetAttempt())
		}
		fmt.Fprintf(&b, "State: %s\n", client.ContainerStateName(c.GetState()))
		if c.GetImage() != nil {
			fmt.Fprintf(&b, "Image: %s\n", safe(c.GetImage().GetImage()))
		}
		fmt.Fprintf(&b, "Created: %s\n", CreatedAgo(now, c.GetCreatedAt()))
		keyValues(&b, "Labels", c.Labels)
		keyValues(&b, "Annotations", c.Annotations)
		b.WriteString("\n")
	}
	_, _ = io.WriteString(w, b.String()) // a listing's writer is a buffer; its Flush reports errors
}

// PodsVerbose is pods -v.
func PodsVerbose(w io.Writer, pods []*runtimeapi.PodSandbox) {
	var b strings.Builder
	for _, p := range pods {
		fmt.Fprintf(&b, "ID: %s\n", safe(p.GetId()))
		if md := p.GetMetadata(); md != nil {
			if md.GetName() != "" {
				fmt.Fprintf(&b, "Name: %s\n", safe(md.GetName()))
			}
			if md.GetUid() != "" {
				fmt.Fprintf(&b, "UID: %s\n", safe(md.GetUid()))
			}
			if md.GetNamespace() != "" {
				fmt.Fprintf(&b, "Namespace: %s\n", safe(md.GetNamespace()))
			}
			if md.GetAttempt() != 0 {
				fmt.Fprintf(&b, "Attempt: %d\n", md.GetAttempt())
			}
		}
		fmt.Fprintf(&b, "Status: %s\nCreated: %v\n", client.PodStateName(p.GetState()), time.Unix(0, p.GetCreatedAt()))
		keyValues(&b, "Labels", p.Labels)
		keyValues(&b, "Annotations", p.Annotations)
		handler := p.GetRuntimeHandler()
		if handler == "" {
			handler = "(default)"
		}
		fmt.Fprintf(&b, "Runtime: %s\n\n", safe(handler))
	}
	_, _ = io.WriteString(w, b.String()) // a listing's writer is a buffer; its Flush reports errors
}

// ImagesVerbose is images -v.
func ImagesVerbose(w io.Writer, images []*runtimeapi.Image) {
	var b strings.Builder
	for _, im := range images {
		fmt.Fprintf(&b, "ID: %s\n", safe(im.GetId()))
		for _, t := range im.GetRepoTags() {
			fmt.Fprintf(&b, "RepoTags: %s\n", safe(t))
		}
		for _, d := range im.GetRepoDigests() {
			fmt.Fprintf(&b, "RepoDigests: %s\n", safe(d))
		}
		if im.GetSize() != 0 {
			fmt.Fprintf(&b, "Size: %d\n", im.GetSize())
		}
		if im.GetUid() != nil {
			fmt.Fprintf(&b, "Uid: %v\n", im.GetUid())
		}
		if im.GetUsername() != "" {
			fmt.Fprintf(&b, "Username: %v\n", safe(im.GetUsername()))
		}
		if im.GetPinned() {
			b.WriteString("Pinned: true\n")
		}
		b.WriteString("\n")
	}
	_, _ = io.WriteString(w, b.String()) // a listing's writer is a buffer; its Flush reports errors
}

// keyValues writes a map as crictl's verbose listings do: "Labels:" and a
// tab-indented "key -> value" line a key, sorted; nothing for a nil map.
func keyValues(b *strings.Builder, title string, m map[string]string) {
	if m == nil {
		return
	}
	fmt.Fprintf(b, "%s:\n", title)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "\t%s -> %s\n", safe(k), safe(m[k]))
	}
}
