package output

import (
	"io"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
)

// TableOptions are what the listing tables share.
type TableOptions struct {
	Now     time.Time
	NoTrunc bool
}

// ContainerTable is crisp ps: crictl's columns, with the pod's name and
// namespace taken from the pod itself (crictl reads kubelet's labels and
// says "unknown" for pods kubelet did not make).
func ContainerTable(w io.Writer, o TableOptions, ctrs []*runtimeapi.Container, pods map[string]*runtimeapi.PodSandbox) {
	Row(w, "CONTAINER", "IMAGE", "CREATED", "STATE", "NAME", "ATTEMPT", "POD ID", "POD", "NAMESPACE")
	for _, ctr := range ctrs {
		md := pods[ctr.GetPodSandboxId()].GetMetadata()
		Row(w, TruncID(ctr.GetId(), o.NoTrunc), ContainerImage(ctr, o.NoTrunc), CreatedAgo(o.Now, ctr.GetCreatedAt()),
			client.ContainerStateName(ctr.GetState()), ctr.GetMetadata().GetName(), ctr.GetMetadata().GetAttempt(),
			TruncID(ctr.GetPodSandboxId(), o.NoTrunc), md.GetName(), md.GetNamespace())
	}
}

// ContainerImage is the image a user would recognise: the name they asked
// for when the runtime kept it, else the image reference, truncated when it
// is a bare digest.
func ContainerImage(ctr *runtimeapi.Container, noTrunc bool) string {
	img := ctr.GetImage().GetUserSpecifiedImage()
	if img == "" {
		img = ctr.GetImage().GetImage()
	}
	if img == "" {
		img = ctr.GetImageRef()
	}
	if strings.HasPrefix(img, "sha256:") || isHexID(img) {
		return TruncID(img, noTrunc)
	}
	return img
}

// PodTable is crisp pods, with crictl's columns.
func PodTable(w io.Writer, o TableOptions, pods []*runtimeapi.PodSandbox) {
	Row(w, "POD ID", "CREATED", "STATE", "NAME", "NAMESPACE", "ATTEMPT", "RUNTIME")
	for _, p := range pods {
		md := p.GetMetadata()
		handler := p.GetRuntimeHandler()
		if handler == "" {
			handler = "(default)"
		}
		Row(w, TruncID(p.GetId(), o.NoTrunc), CreatedAgo(o.Now, p.GetCreatedAt()), client.PodStateName(p.GetState()),
			md.GetName(), md.GetNamespace(), md.GetAttempt(), handler)
	}
}

// ImageTableOptions are crisp images' table flags.
type ImageTableOptions struct {
	NoTrunc, Digests, Pinned bool
	// Verbose is crictl's images -v (ImagesVerbose instead of the table).
	Verbose bool
	// Filters are crictl's -f/--filter conditions (client.FilterImages).
	Filters []string
}

// ImageTable is crisp images: one line per tag.
func ImageTable(w io.Writer, o ImageTableOptions, images []*runtimeapi.Image) {
	header := []any{"IMAGE", "TAG"}
	if o.Digests {
		header = append(header, "DIGEST")
	}
	header = append(header, "IMAGE ID", "SIZE")
	if o.Pinned {
		header = append(header, "PINNED")
	}
	Row(w, header...)
	for _, img := range images {
		digest := "<none>"
		if ds := img.GetRepoDigests(); len(ds) > 0 {
			if _, d, ok := strings.Cut(ds[0], "@"); ok {
				digest = TruncID(d, o.NoTrunc)
			}
		}
		for _, rt := range RepoTags(img) {
			cells := []any{rt[0], rt[1]}
			if o.Digests {
				cells = append(cells, digest)
			}
			cells = append(cells, TruncID(img.GetId(), o.NoTrunc), HumanSize(img.GetSize()))
			if o.Pinned {
				cells = append(cells, img.GetPinned())
			}
			Row(w, cells...)
		}
	}
}

// RepoTags splits an image's tags into (repository, tag) pairs; an image
// without tags shows its digest's repository, or <none>.
func RepoTags(img *runtimeapi.Image) [][2]string {
	var out [][2]string
	for _, t := range img.GetRepoTags() {
		repo, tag := SplitTag(t)
		out = append(out, [2]string{repo, tag})
	}
	if len(out) > 0 {
		return out
	}
	for _, d := range img.GetRepoDigests() {
		repo, _, _ := strings.Cut(d, "@")
		return [][2]string{{repo, "<none>"}}
	}
	return [][2]string{{"<none>", "<none>"}}
}

// ContainerSummary is one container in inspect -o table.
func ContainerSummary(w io.Writer, now time.Time, st *runtimeapi.ContainerStatus) {
	md := st.GetMetadata()
	Row(w, "ID:", st.GetId())
	Row(w, "Name:", md.GetName())
	Row(w, "Attempt:", md.GetAttempt())
	Row(w, "State:", client.ContainerStateName(st.GetState()))
	Row(w, "Created:", Timestamp(now, st.GetCreatedAt()))
	if st.GetStartedAt() != 0 {
		Row(w, "Started:", Timestamp(now, st.GetStartedAt()))
	}
	if st.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED {
		Row(w, "Finished:", Timestamp(now, st.GetFinishedAt()))
		Row(w, "Exit code:", st.GetExitCode())
		if st.GetReason() != "" {
			Row(w, "Reason:", st.GetReason())
		}
	}
	Row(w, "Image:", st.GetImage().GetImage())
	Row(w, "Image ref:", st.GetImageRef())
	if labels := FormatLabels(st.GetLabels()); labels != "" {
		Row(w, "Labels:", labels)
	}
}

// PodSummary is one pod in inspectp -o table.
func PodSummary(w io.Writer, now time.Time, st *runtimeapi.PodSandboxStatus) {
	md := st.GetMetadata()
	Row(w, "ID:", st.GetId())
	Row(w, "Name:", md.GetName())
	Row(w, "Namespace:", md.GetNamespace())
	Row(w, "UID:", md.GetUid())
	Row(w, "Attempt:", md.GetAttempt())
	Row(w, "State:", client.PodStateName(st.GetState()))
	Row(w, "Created:", Timestamp(now, st.GetCreatedAt()))
	if ip := st.GetNetwork().GetIp(); ip != "" {
		Row(w, "IP:", ip)
	}
	if h := st.GetRuntimeHandler(); h != "" {
		Row(w, "Runtime handler:", h)
	}
	if labels := FormatLabels(st.GetLabels()); labels != "" {
		Row(w, "Labels:", labels)
	}
}

// ImageSummary is one image in inspecti -o table, crictl's lines.
func ImageSummary(w io.Writer, _ time.Time, img *runtimeapi.Image) {
	Row(w, "ID:", img.GetId())
	for _, t := range img.GetRepoTags() {
		Row(w, "Tag:", t)
	}
	for _, d := range img.GetRepoDigests() {
		Row(w, "Digest:", d)
	}
	Row(w, "Size:", HumanSize(img.GetSize()))
	if img.GetPinned() {
		Row(w, "Pinned:", "true")
	}
}
