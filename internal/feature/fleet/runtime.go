package fleet

import (
	"fmt"
	"path"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// A fleet in the middle of a runtime migration runs containerd on some
// nodes and CRI-O on others, each with its socket elsewhere. The run finds
// each node's socket: --runtime-socket PATH for every node, or
// RUNTIME=PATH pairs by the runtime the node reports, else on its own (the
// socket kubeadm noted on the node, else the runtime's usual path).

// KubeadmSocketAnnotation is where kubeadm notes a node's CRI socket.
const KubeadmSocketAnnotation = "kubeadm.alpha.kubernetes.io/cri-socket"

// DefaultSockets are the usual sockets of the runtimes a kubelet reports
// (the part of status.nodeInfo.containerRuntimeVersion before "://").
var DefaultSockets = map[string]string{
	"containerd": "/run/containerd/containerd.sock",
	"cri-o":      "/run/crio/crio.sock",
	"docker":     "/run/cri-dockerd.sock", // Docker Engine through cri-dockerd
}

// Sockets is --runtime-socket parsed: one path for every node (All), or a
// path per runtime (ByRuntime); both empty find each node's own.
type Sockets struct {
	All       string
	ByRuntime map[string]string
}

// ParseSockets reads --runtime-socket: "" (find each node's), PATH, or
// RUNTIME=PATH[,RUNTIME=PATH...].
func ParseSockets(s string) (Sockets, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Sockets{}, nil
	}
	if !strings.Contains(s, "=") {
		if err := checkSocketPath(s); err != nil {
			return Sockets{}, err
		}
		return Sockets{All: s}, nil
	}
	out := Sockets{ByRuntime: map[string]string{}}
	for _, pair := range strings.Split(s, ",") {
		rt, p, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || rt == "" {
			return Sockets{}, fmt.Errorf("--runtime-socket %q: want PATH, or RUNTIME=PATH pairs separated by commas (e.g. containerd=/run/containerd/containerd.sock,cri-o=/run/crio/crio.sock)", pair)
		}
		if err := checkSocketPath(p); err != nil {
			return Sockets{}, err
		}
		out.ByRuntime[rt] = p
	}
	return out, nil
}

func checkSocketPath(p string) error {
	if !strings.HasPrefix(p, "/") || path.Clean(p) != p {
		return fmt.Errorf("--runtime-socket: %q must be an absolute, clean path on the nodes (e.g. /run/containerd/containerd.sock)", p)
	}
	return nil
}

// runtimeOf is the runtime a node reports ("containerd", "cri-o"), and its
// version string as a whole ("containerd://1.6.20").
func runtimeOf(n corev1.Node) (name, version string) {
	version = n.Status.NodeInfo.ContainerRuntimeVersion
	name, _, _ = strings.Cut(version, "://")
	return name, version
}

// socketFor returns the node's runtime socket, or why there is none.
func (s Sockets) socketFor(n corev1.Node) (string, error) {
	name, version := runtimeOf(n)
	if s.All != "" {
		return s.All, nil
	}
	if p, ok := s.ByRuntime[name]; ok {
		return p, nil
	}
	if s.ByRuntime == nil {
		if a := strings.TrimPrefix(n.Annotations[KubeadmSocketAnnotation], "unix://"); a != "" {
			if err := checkSocketPath(a); err == nil {
				return a, nil
			}
		}
		if p, ok := DefaultSockets[name]; ok {
			return p, nil
		}
	}
	known := make([]string, 0, len(s.ByRuntime))
	for rt := range s.ByRuntime {
		known = append(known, rt)
	}
	sort.Strings(known)
	if version == "" {
		version = "a runtime it does not name"
	}
	what := "crisp knows no socket for it"
	if len(known) > 0 {
		what = "--runtime-socket names sockets for " + strings.Join(known, ", ") + " only"
	}
	return "", fmt.Errorf("the node runs %s and %s: pass --runtime-socket %s=PATH", version, what, orRuntime(name))
}

func orRuntime(name string) string {
	if name == "" {
		return "RUNTIME"
	}
	return name
}
