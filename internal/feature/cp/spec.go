// Package cp copies files and directory trees between a container and the
// local machine (`crisp cp`), two ways: tar over exec, where the container
// has tar, and through the node's view of the container's root
// (/proc/PID/root) where it has none, resolving every path inside that
// root with openat2's RESOLVE_IN_ROOT so that no symlink in the container
// can reach the node's files. Both travel as a tar stream unpacked by one
// unpacker that refuses entries escaping the destination, stages the copy
// under a temporary name beside it, and renames it into place only once
// complete, so a failed copy leaves nothing behind. It writes only to the
// streams it is given and never exits.
package cp

import (
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
)

// Request is one copy, as the two arguments give it.
type Request struct {
	Container string
	// Remote is the path in the container, Local the one here.
	Remote, Local string
	// In is a copy into the container (LOCAL CONTAINER:PATH).
	In bool
}

// spec is one argument: CONTAINER:PATH or a local path.
type spec struct {
	container, path string
}

// parseSpec splits an argument as kubectl cp does: up to the first colon
// is the container. Unlike kubectl (whose pods may be written
// NAMESPACE/POD) a container never has a "/" in its ID or name, so a colon
// after a "/" is part of a local path (./a:b), and so is a Windows-free
// path like /tmp/x:y.
func parseSpec(arg string) (spec, error) {
	i := strings.Index(arg, ":")
	if i < 0 || strings.Contains(arg[:i], "/") {
		return spec{path: arg}, nil
	}
	if i == 0 {
		return spec{}, fmt.Errorf("%q names no container before the colon: write CONTAINER:PATH, or ./%s for a local file", arg, arg)
	}
	return spec{container: arg[:i], path: arg[i+1:]}, nil
}

// ParseArgs reads SRC and DEST (its errors are cmdutil.UsageError): exactly one of them is CONTAINER:PATH,
// PATH in the container is absolute, and neither path is empty.
func ParseArgs(src, dst string) (Request, error) {
	s, err := parseSpec(src)
	if err != nil {
		return Request{}, cmdutil.UsageErrorf("cp: %w", err)
	}
	d, err := parseSpec(dst)
	if err != nil {
		return Request{}, cmdutil.UsageErrorf("cp: %w", err)
	}
	var r Request
	switch {
	case s.container != "" && d.container != "":
		return r, cmdutil.UsageErrorf("cp: both %q and %q name a container; one of them must be a local path (crisp cp copies between a container and here)", src, dst)
	case s.container == "" && d.container == "":
		return r, cmdutil.UsageErrorf("cp: neither %q nor %q names a container; write one as CONTAINER:PATH", src, dst)
	case s.container != "":
		r = Request{Container: s.container, Remote: s.path, Local: d.path}
	default:
		r = Request{Container: d.container, Remote: d.path, Local: s.path, In: true}
	}
	if r.Remote == "" || r.Local == "" {
		return r, cmdutil.UsageErrorf("cp: a path is empty (%q, %q): name a file or directory on both sides", src, dst)
	}
	if !path.IsAbs(r.Remote) {
		return r, cmdutil.UsageErrorf("cp: the path in container %s must be absolute: %s:/%s", r.Container, r.Container, r.Remote)
	}
	if !r.In && path.Clean(r.Remote) == "/" {
		return r, cmdutil.UsageErrorf("cp: copy a directory under / rather than the container's whole root")
	}
	if r.In && (path.Base(r.Local) == "/" || path.Base(r.Local) == "..") {
		return r, cmdutil.UsageErrorf("cp: %q has no name to copy under; name the directory itself", r.Local)
	}
	return r, nil
}

// ParseSizeLimit reads --size-limit: a byte count as Kubernetes writes
// quantities (500Mi, 2Gi, 1G, 1048576); "" or 0 is no limit.
func ParseSizeLimit(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	q, err := resource.ParseQuantity(s)
	if err != nil || q.Sign() < 0 {
		return 0, cmdutil.UsageErrorf("cp: --size-limit %q: want a byte count such as 500Mi, 2Gi or 1048576", s)
	}
	n, ok := q.AsInt64()
	if !ok {
		return 0, cmdutil.UsageErrorf("cp: --size-limit %q is out of range", s)
	}
	return n, nil
}
