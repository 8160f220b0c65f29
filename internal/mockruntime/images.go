package mockruntime

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// DefaultImage is the image the mock holds from the start: busybox-like, so
// it runs `sh` and busybox applets. It is critest's default test image, so
// critest finds it without pulling.
const DefaultImage = "registry.k8s.io/e2e-test-images/busybox:1.29-2"

// Web-server ports: critest's nginx image serves on 80, its host-network
// image (hostnet-nginx-ARCH) on 12003.
const (
	webServerPort        = 80
	hostNetWebServerPort = 12003
)

// imageKind is what an image runs when the container gives no command.
type imageKind int

const (
	// imageOther has no default command: containers must name one.
	imageOther imageKind = iota
	// imageBusybox runs sh with busybox applets first in PATH.
	imageBusybox
	// imageWebServer runs the mock's built-in static HTTP server.
	imageWebServer
)

// classifyImage tells what a (normalized) image name runs, and on which port
// a web server listens.
func classifyImage(name string) (imageKind, int) {
	repo := strings.ToLower(name)
	switch {
	case strings.Contains(repo, "hostnet-nginx"):
		return imageWebServer, hostNetWebServerPort
	case strings.Contains(repo, "nginx"), strings.Contains(repo, "httpd"):
		return imageWebServer, webServerPort
	case strings.Contains(repo, "busybox"):
		return imageBusybox, 0
	}
	return imageOther, 0
}

// normalizeImage turns a reference into the canonical form runtimes report:
// docker.io/library/busybox:latest for busybox. IDs (sha256:...) pass as
// they are.
func normalizeImage(ref string) string {
	if strings.HasPrefix(ref, "sha256:") {
		return ref
	}
	name, digest, hasDigest := strings.Cut(ref, "@")
	first, _, hasSlash := strings.Cut(name, "/")
	if !hasSlash || (!strings.ContainsAny(first, ".:") && first != "localhost") {
		if !hasSlash {
			name = "library/" + name
		}
		name = "docker.io/" + name
	}
	if hasDigest {
		return name + "@" + digest
	}
	if i := strings.LastIndex(name, ":"); i < 0 || strings.Contains(name[i:], "/") {
		name += ":latest"
	}
	return name
}

// imageID derives a stable ID from a normalized name: the mock has no
// layers to hash.
func imageID(name string) string {
	sum := sha256.Sum256([]byte(name))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// imageStore records the images the runtime "has": the default image and
// every image pulled since.
type imageStore struct {
	mu     sync.Mutex
	byName map[string]*runtimeapi.Image // normalized name -> image
}

func newImageStore() *imageStore {
	s := &imageStore{byName: map[string]*runtimeapi.Image{}}
	s.add(DefaultImage)
	return s
}

// add records ref and returns its image.
func (s *imageStore) add(ref string) *runtimeapi.Image {
	name := normalizeImage(ref)
	s.mu.Lock()
	defer s.mu.Unlock()
	if img, ok := s.byName[name]; ok {
		return img
	}
	img := &runtimeapi.Image{
		Id:       imageID(name),
		RepoTags: []string{name},
		// A plausible size, so listings show one.
		Size: 4 << 20,
		Spec: &runtimeapi.ImageSpec{Image: name},
	}
	if i := strings.Index(name, "@"); i >= 0 {
		img.RepoTags = nil
		img.RepoDigests = []string{name}
	}
	s.byName[name] = img
	return img
}

// find looks ref up by name, by ID or by unique ID prefix.
func (s *imageStore) find(ref string) *runtimeapi.Image {
	s.mu.Lock()
	defer s.mu.Unlock()
	if img, ok := s.byName[normalizeImage(ref)]; ok {
		return img
	}
	// An ID or a prefix of one (at least 4 hex digits), as crictl shows them.
	id := strings.TrimPrefix(ref, "sha256:")
	if len(id) < 4 || strings.Trim(id, "0123456789abcdef") != "" {
		return nil
	}
	var found *runtimeapi.Image
	for _, img := range s.byName {
		if strings.HasPrefix(strings.TrimPrefix(img.Id, "sha256:"), id) {
			if found != nil && found != img {
				return nil
			}
			found = img
		}
	}
	return found
}

func (s *imageStore) remove(img *runtimeapi.Image) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, i := range s.byName {
		if i == img {
			delete(s.byName, name)
		}
	}
}

func (s *imageStore) list() []*runtimeapi.Image {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*runtimeapi.Image, 0, len(s.byName))
	for _, img := range s.byName {
		out = append(out, img)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RepoTags[0] < out[j].RepoTags[0] })
	return out
}

// hostPath is the PATH of containers whose image has no busybox.
const hostPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// processEnv knows how images map to host programs: where the busybox
// applet links are.
type processEnv struct {
	// busyboxDir holds one link to busybox per applet; "" when busybox is
	// missing and busybox images fall back to the host's sh.
	busyboxDir string
	applets    map[string]bool
}

func newProcessEnv(logf func(string, ...any)) processEnv {
	// Where Debian's busybox-static (and others) put busybox.
	busyboxCandidates := []string{"/bin/busybox", "/usr/bin/busybox", "/usr/local/bin/busybox"}
	var bin string
	for _, c := range busyboxCandidates {
		if isExecutable(c) == nil {
			bin = c
			break
		}
	}
	if bin == "" {
		logf("warning: no busybox binary (%s); busybox images run the host's /bin/sh and tools; install busybox-static (apt-get install -y busybox-static)", strings.Join(busyboxCandidates, ", "))
		return processEnv{}
	}
	out, err := exec.Command(bin, "--list").Output()
	if err != nil {
		logf("warning: %s --list failed (%v); busybox images run the host's /bin/sh and tools", bin, err)
		return processEnv{}
	}
	var applets []string
	for _, applet := range strings.Fields(string(out)) {
		if !strings.Contains(applet, "/") {
			applets = append(applets, applet)
		}
	}
	dir, err := appletDir(bin, applets)
	if err != nil {
		logf("warning: %v; busybox images run the host's /bin/sh and tools", err)
		return processEnv{}
	}
	env := processEnv{busyboxDir: dir, applets: map[string]bool{}}
	for _, a := range applets {
		env.applets[a] = true
	}
	return env
}

// appletDir returns a folder of links to bin, one per applet. Making ~300
// links costs 50-200 ms on these machines, on every start, so the folder
// is a cache shared by every mock of this user: named after the busybox
// binary (path, size, time), built aside and renamed into place, and only
// trusted when this user owns it and no one else can write to it.
func appletDir(bin string, applets []string) (string, error) {
	fi, err := os.Stat(bin)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d\x00%d", bin, fi.Size(), fi.ModTime().UnixNano(), len(applets)))
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("crisp-busybox-%d-%x", os.Geteuid(), sum[:6]))
	if trustedAppletDir(dir) {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "crisp-busybox-build-")
	if err != nil {
		return "", fmt.Errorf("create a folder for busybox applet links: %w", err)
	}
	for _, a := range applets {
		if err := os.Symlink(bin, filepath.Join(tmp, a)); err != nil {
			os.RemoveAll(tmp)
			return "", fmt.Errorf("link busybox applet %s: %w", a, err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another mock got there first: use its folder if it is sound.
		os.RemoveAll(tmp)
		if trustedAppletDir(dir) {
			return dir, nil
		}
		return "", fmt.Errorf("put busybox applet links in %s: %w", dir, err)
	}
	return dir, nil
}

// trustedAppletDir reports whether dir is a complete applet folder that
// only this user can have written.
func trustedAppletDir(dir string) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o022 != 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != os.Geteuid() {
		return false
	}
	_, err = os.Lstat(filepath.Join(dir, "sh"))
	return err == nil
}

// pathFor is the default PATH of a container of the given kind.
func (e processEnv) pathFor(kind imageKind) string {
	if kind == imageBusybox && e.busyboxDir != "" {
		return e.busyboxDir + ":" + hostPath
	}
	return hostPath
}

// resolve finds the program for argv[0] in a container of the given kind:
// in a busybox image, /bin/sh and the like are busybox applets, as they are
// in a real busybox container.
func (e processEnv) resolve(kind imageKind, name, pathEnv string) (string, error) {
	if kind == imageBusybox && e.busyboxDir != "" && filepath.IsAbs(name) {
		switch filepath.Dir(name) {
		case "/bin", "/sbin", "/usr/bin", "/usr/sbin":
			if base := filepath.Base(name); e.applets[base] {
				return filepath.Join(e.busyboxDir, base), nil
			}
		}
	}
	return lookPath(name, pathEnv)
}
