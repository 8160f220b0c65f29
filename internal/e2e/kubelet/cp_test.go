package kubelet

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// writeTree writes a tree with a 0750 directory, files of 0640 and 0604
// (one of 3 MiB of random bytes) and a relative symlink, and returns its
// listing (treeListing).
func writeTree(t *testing.T, root string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o750); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 3<<20)
	_, _ = rand.Read(big)
	for name, f := range map[string]struct {
		data []byte
		mode fs.FileMode
	}{"app.conf": {[]byte("listen = 8080\n"), 0o640}, "sub/data.bin": {big, 0o604}} {
		if err := os.WriteFile(filepath.Join(root, name), f.data, f.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(root, name), f.mode); err != nil { // past the umask
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(root, "sub"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/data.bin", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	return treeListing(t, root)
}

// treeListing is one line per entry under root: path, mode, and the
// sha256 of a file or the target of a link.
func treeListing(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%s %v", rel, info.Mode())
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			line += " -> " + target
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %x", sha256.Sum256(data))
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// crisp cp on a container the kubelet owns (busybox, so tar over exec):
// a tree with modes and a symlink goes in and comes back equal, kubectl
// exec through the kubelet sees the same bytes in the pod, and a single
// file round-trips too.
func TestCpOnKubeletPod(t *testing.T) {
	c := requireCluster(t)
	const pod = "crisp-e2e-cp"
	id := c.targetPod(t, pod)
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	want := writeTree(t, tree)

	r := c.crisp(t, nil, "-v", "cp", tree, id+":/tmp/cp-tree")
	if r.Code != 0 || !strings.Contains(r.Stderr, "tar over exec") {
		t.Fatalf("cp in: %v", r)
	}
	data, err := os.ReadFile(filepath.Join(tree, "sub", "data.bin"))
	if err != nil {
		t.Fatal(err)
	}
	k := c.kubectl(t, nil, "exec", pod, "--", "sha256sum", "/tmp/cp-tree/sub/data.bin")
	if k.Code != 0 || !strings.HasPrefix(k.Stdout, fmt.Sprintf("%x", sha256.Sum256(data))) {
		t.Errorf("kubectl exec sha256sum in the pod disagrees with the local file: %v", k)
	}
	back := filepath.Join(dir, "back")
	if r := c.crisp(t, nil, "cp", id+":/tmp/cp-tree", back); r.Code != 0 {
		t.Fatalf("cp out: %v", r)
	}
	if got := treeListing(t, back); got != want {
		t.Errorf("round trip through the pod:\n got %s\nwant %s", got, want)
	}

	// One file into a directory, out to a new name.
	if r := c.crisp(t, nil, "cp", filepath.Join(tree, "app.conf"), id+":/tmp/"); r.Code != 0 {
		t.Fatalf("cp file in: %v", r)
	}
	if r := c.crisp(t, nil, "cp", id+":/tmp/app.conf", filepath.Join(dir, "app.back")); r.Code != 0 {
		t.Fatalf("cp file out: %v", r)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "app.back")); string(got) != "listen = 8080\n" {
		t.Errorf("file round trip: %q", got)
	}
	if r := c.crisp(t, nil, "exec", id, "--", "sh", "-c", "ls -a /tmp | grep -c crisp-cp"); strings.TrimSpace(r.Stdout) != "0" {
		t.Errorf("staged copies left in /tmp: %v", r)
	}
}

// distrolessPod runs crisp's own image (the static binary on an empty
// base: no shell, no tar) through the API server as a long-running
// process (crisp's mock runtime, which needs a /tmp: an emptyDir there,
// its socket in it) and returns its container's runtime ID.
func (c *Cluster) distrolessPod(t *testing.T, name string) string {
	t.Helper()
	pod := fmt.Sprintf(`{"apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": %q, "namespace": "default"},
  "spec": {"hostNetwork": true, "dnsPolicy": "Default", "automountServiceAccountToken": false,
    "terminationGracePeriodSeconds": 0,
    "volumes": [{"name": "tmp", "emptyDir": {}}],
    "containers": [{"name": "main", "image": %q, "imagePullPolicy": "IfNotPresent",
      "args": ["mock-runtime", "--listen", "unix:///tmp/mock.sock"],
      "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}]}]}}`,
		name, c.ImageCrisp)
	return c.runPod(t, name, pod)
}

// crisp cp into and out of a kubelet pod's container with no shell and no
// tar (where kubectl cp cannot copy at all): auto goes through the node's
// view of the container's root, and a file and a tree come back equal.
func TestCpDistrolessOnKubeletPod(t *testing.T) {
	c := requireCluster(t)
	const pod = "crisp-e2e-cp-distroless"
	id := c.distrolessPod(t, pod)
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	want := writeTree(t, tree)

	if k := c.kubectl(t, nil, "cp", filepath.Join(tree, "app.conf"), pod+":/app.conf"); k.Code == 0 {
		t.Logf("kubectl cp into the distroless pod worked? %v", k)
	} else {
		t.Logf("kubectl cp into the distroless pod (expected to fail, no tar): %v", k)
	}
	r := c.crisp(t, nil, "-v", "cp", filepath.Join(tree, "app.conf"), id+":/app.conf")
	if r.Code != 0 || !strings.Contains(r.Stderr, "has no tar") || !strings.Contains(r.Stderr, "/root (pid ") {
		t.Fatalf("cp file in: %v", r)
	}
	if r := c.crisp(t, nil, "cp", id+":/app.conf", filepath.Join(dir, "app.back")); r.Code != 0 {
		t.Fatalf("cp file out: %v", r)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "app.back"))
	if wantConf, _ := os.ReadFile(filepath.Join(tree, "app.conf")); !bytes.Equal(got, wantConf) {
		t.Errorf("file round trip: %q, want %q", got, wantConf)
	}

	if r := c.crisp(t, nil, "cp", tree, id+":/cp-tree"); r.Code != 0 {
		t.Fatalf("cp tree in: %v", r)
	}
	back := filepath.Join(dir, "back")
	if r := c.crisp(t, nil, "cp", id+":/cp-tree", back); r.Code != 0 {
		t.Fatalf("cp tree out: %v", r)
	}
	if got := treeListing(t, back); got != want {
		t.Errorf("round trip through the distroless pod:\n got %s\nwant %s", got, want)
	}
}
